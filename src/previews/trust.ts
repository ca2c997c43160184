/**
 * Who may run code as a preview (docs/previews.md "Trust"): the one judgement of a pull request's event against
 * `previews` (forks, authors, the label and its approved head, the base branch, a pause, `max`). A refusal has a
 * reason (its metric's label) and a text (the answer's `[skipped] …`).
 */
import type { Preview, PreviewSettings, PullRequestEvent } from "./types.ts";
import { BITBUCKET_FORK_REFUSAL } from "./events-bitbucket.ts";

export type RefusalReason =
  | "paused"
  | "base"
  | "fork"
  | "author"
  | "undecidable"
  | "label"
  | "max"
  | "head"
  | "paths"
  | "signature";

export type Verdict =
  | { deploy: true; approvedHead?: string }
  | { teardown: true }
  | { refuse: RefusalReason; text: string }
  /** Nothing to do and nothing refused (a label previews do not use, a close of a PR without a preview). */
  | { ignore: string };

/**
 * Whether `login` passes `authors`: true, false, or undefined when nothing can decide (no association sent, no
 * forge to ask). `association` is the one the event sent for that login (GitHub's author_association).
 */
export type AuthorCheck = (login: string, association: string | undefined) => Promise<boolean | undefined>;

export interface Judged {
  event: PullRequestEvent;
  settings: PreviewSettings;
  /** The app's `branch`: a PR into another base is refused. */
  branch?: string;
  /** The PR's preview, when there is one. */
  existing?: Preview;
  /** Every preview of the app now (for `max`). */
  previews: readonly Preview[];
  /** Why deploys are paused, when they are. */
  paused?: string;
}

/** The verdict on a pull request's event. */
export async function judge(input: Judged, passes: AuthorCheck): Promise<Verdict> {
  const { event, settings, existing } = input;
  const pr = `pull request #${event.number}`;
  if (event.action === "close") return existing ? { teardown: true } : { ignore: `${pr} closed; it has no preview` };
  if (input.paused !== undefined) return { refuse: "paused", text: `previews are paused: ${input.paused}` };
  if (input.branch && event.base !== input.branch)
    return { refuse: "base", text: `${pr} targets ${event.base}; previews are of pull requests into ${input.branch}` };
  if (event.fork && event.forge === "bitbucket") return { refuse: "fork", text: `${pr}: ${BITBUCKET_FORK_REFUSAL}` };
  if (event.fork && !settings.fromForks)
    return { refuse: "fork", text: `${pr} comes from a fork; previews.fromForks is off` };
  const check = async (login: string, association: string | undefined, role: string) => {
    const verdict = await passes(login, association);
    if (verdict === true) return undefined;
    if (verdict === undefined)
      return {
        refuse: "undecidable" as const,
        text: `${pr}: cannot tell whether ${role} ${login} is among previews.authors (no forge token to ask; name them as user:${login})`,
      };
    return { refuse: "author" as const, text: `${pr}: ${role} ${login} is not among previews.authors` };
  };
  const label = settings.label;
  if (label) {
    const needed = `new commits need the \`${label}\` label again`;
    if (event.action === "label") {
      const added = event.forge === "github" ? event.label === label : event.labels.includes(label);
      if (!added) return { ignore: `${pr}: label ${event.label ?? "change"} is not previews.label` };
      const refused = await check(
        event.sender,
        event.sender === event.author ? event.association : undefined,
        "labeller",
      );
      return refused ?? { deploy: true, approvedHead: event.head };
    }
    if (existing?.approvedHead === event.head) return roomFor(input) ?? { deploy: true, approvedHead: event.head };
    if (!existing?.approvedHead)
      return { refuse: "label", text: `${pr} needs the \`${label}\` label from one of previews.authors` };
    // A later head deploys only when its pusher passes; otherwise the preview stays at the approved commit.
    const refused = await check(event.sender, undefined, "pusher");
    if (refused) return { refuse: "label", text: `${pr}: ${needed} (${refused.text.replace(`${pr}: `, "")})` };
    return { deploy: true, approvedHead: event.head };
  }
  if (event.action === "label") return { ignore: `${pr} labelled; previews need no label` };
  const refused =
    event.action === "open"
      ? await check(event.author, event.association, "author")
      : await check(event.sender, event.sender === event.author ? event.association : undefined, "pusher");
  return refused ?? roomFor(input) ?? { deploy: true };
}

/** `max` reached: refused, naming the previews that hold the places. */
function roomFor(input: Judged): Verdict | undefined {
  if (input.existing || input.previews.length < input.settings.max) return undefined;
  const held = input.previews.map((p) => `#${p.number}`).join(", ");
  return {
    refuse: "max",
    text: `pull request #${input.event.number}: previews.max (${input.settings.max}) reached, held by ${held}`,
  };
}

/**
 * `authors` against a login: `user:<login>` entries, the association the event sent, else the forge's answer (a
 * permission of write or more counts as COLLABORATOR, the owner as OWNER) when `ask` can reach it.
 */
export function authorCheck(
  authors: readonly string[],
  ask?: (login: string) => Promise<string | undefined>,
): AuthorCheck {
  return async (login, association) => {
    if (authors.some((a) => a.toLowerCase() === `user:${login}`.toLowerCase())) return true;
    if (association && authors.includes(association.toUpperCase())) return true;
    const associations = authors.filter((a) => !a.startsWith("user:"));
    if (associations.length === 0) return false;
    if (ask) {
      const asked = await ask(login);
      if (asked !== undefined) return associations.includes(asked);
    }
    return association ? false : undefined;
  };
}
