/**
 * A forge's `pull_request` delivery as a PullRequestEvent (docs/previews.md "Events"): GitHub and Gitea/Forgejo
 * here; every other forge's parser returns the same shape. Every text in it is an outsider's, kept as sent (bounded)
 * and escaped where it goes.
 */
import type { PullRequestEvent } from "./types.ts";

type Payload = Record<string, unknown>;

/** What a delivery is to previews: a pull request's event, one to skip (and why), or none of theirs. */
export type PreviewDelivery =
  | { event: PullRequestEvent }
  | { skip: string; kind: "preview deployment" | "ignored" | "unreadable" }
  | undefined;

/** Longest text kept of a title, a branch or a login. */
const MAX_TEXT = 256;
const COMMIT = /^[0-9a-f]{40}$/;

const GITHUB_ACTIONS: Record<string, PullRequestEvent["action"]> = {
  opened: "open",
  reopened: "open",
  synchronize: "push",
  labeled: "label",
  closed: "close",
};
const GITEA_ACTIONS: Record<string, PullRequestEvent["action"]> = {
  opened: "open",
  reopened: "open",
  synchronized: "push",
  label_updated: "label",
  closed: "close",
};

const object = (value: unknown): Payload | undefined =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Payload) : undefined;
const text = (value: unknown): string => (typeof value === "string" ? value.slice(0, MAX_TEXT) : "");
const login = (value: unknown): string => text(object(value)?.login) || text(object(value)?.username);

/** Which forge sent the delivery, by its headers: Gitea and Forgejo also send GitHub's, so theirs are asked first. */
export function forgeOfHeaders(headers: Headers): { forge: "github" | "gitea"; event: string } | undefined {
  const gitea = headers.get("x-forgejo-event") ?? headers.get("x-gitea-event") ?? headers.get("x-gogs-event");
  if (gitea !== null) return { forge: "gitea", event: gitea.trim().toLowerCase() };
  const github = headers.get("x-github-event");
  if (github !== null) return { forge: "github", event: github.trim().toLowerCase() };
  return undefined;
}

/** The delivery as previews see it; undefined when it is no pull request's event nor a preview's own deployment. */
export function previewDelivery(headers: Headers, payload: Payload | undefined): PreviewDelivery {
  const from = forgeOfHeaders(headers);
  if (!from) return undefined;
  if (from.forge === "github" && from.event === "deployment") {
    const environment = text(object(payload?.deployment)?.environment);
    return environment.startsWith("preview/") ? { skip: "preview deployment", kind: "preview deployment" } : undefined;
  }
  const names =
    from.forge === "github" ? ["pull_request"] : ["pull_request", "pull_request_label", "pull_request_sync"];
  if (!names.includes(from.event)) return undefined;
  const actions = from.forge === "github" ? GITHUB_ACTIONS : GITEA_ACTIONS;
  const raw = text(payload?.action);
  const action = Object.hasOwn(actions, raw) ? actions[raw] : undefined;
  if (!action)
    return {
      skip: `pull request ${raw ? `"${raw}"` : "event without an action"}: nothing for previews`,
      kind: "ignored",
    };
  const event = pullRequestOf(from.forge, action, payload);
  return event ? { event } : { skip: "pull request event without its number, head or branches", kind: "unreadable" };
}

/** The PullRequestEvent of a GitHub or Gitea payload, or undefined when a field it needs is missing. */
function pullRequestOf(
  forge: "github" | "gitea",
  action: PullRequestEvent["action"],
  payload: Payload | undefined,
): PullRequestEvent | undefined {
  const pr = object(payload?.pull_request);
  const head = object(pr?.head);
  const base = object(pr?.base);
  const number = typeof pr?.number === "number" ? pr.number : payload?.number;
  const sha = text(head?.sha);
  const branch = text(head?.ref);
  const baseRef = text(base?.ref);
  if (typeof number !== "number" || !Number.isSafeInteger(number) || number < 1) return undefined;
  if (!COMMIT.test(sha) || !branch || !baseRef) return undefined;
  const headRepo = text(object(head?.repo)?.full_name).toLowerCase();
  const baseRepo = text(object(base?.repo)?.full_name).toLowerCase();
  const labels = Array.isArray(pr?.labels) ? pr.labels.map((l) => text(object(l)?.name)).filter(Boolean) : [];
  const association = text(pr?.author_association);
  const added = forge === "github" ? text(object(payload?.label)?.name) : undefined;
  return {
    forge,
    action,
    number,
    title: text(pr?.title),
    branch,
    base: baseRef,
    head: sha,
    fetchRef: `refs/pull/${number}/head`,
    // A head repository that is gone (a deleted fork) is no longer the base's.
    fork: !headRepo || headRepo !== baseRepo,
    author: login(pr?.user),
    sender: login(payload?.sender),
    ...(association ? { association } : {}),
    ...(added ? { label: added } : {}),
    labels,
    ...(pr?.merged === true ? { merged: true } : {}),
  };
}
