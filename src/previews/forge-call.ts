/**
 * One call of a forge's API for a preview (report-*.ts, comment.ts, authors-gitlab.ts): the house's outbound call
 * (a time limit per try, retries on 5xx, no redirect followed, the answer read up to 64 KiB), a list read within the
 * gate's bounds (4 MiB an answer, 20 pages, one deadline, the next page on the API's own origin only). The token goes
 * to the API's origin only, and never into what a failure says.
 */
import { DEFAULT_OUTBOUND_TIMEOUT_MS } from "../config/schema-notify.ts";
import type { StatusTarget } from "../config/forge.ts";
import { basicCredential } from "../config/notify.ts";
import { boundedRead, type Next, pages } from "../gate/forge-read.ts";
import { authHeaders } from "../gate/forges.ts";
import { type OutboundAnswer, OutboundCalls, type OutboundOptions, type OutboundRequest } from "../notify/outbound.ts";

export const FORGE_NAMES = { github: "GitHub", gitlab: "GitLab", gitea: "Gitea", bitbucket: "Bitbucket" } as const;

/** The previews' calls, apart from any deploy's. */
const calls = new OutboundCalls();

/** One deadline for a list of comments (all its pages). */
const LIST_TIMEOUT_MS = 30_000;

/** What went wrong in one report: each line a problem the caller logs. */
export type Problems = string[];

/** The token, its password part and its Basic form, as they must never be shown. */
export function redactToken(value: string, token: string): string {
  const secrets = [token, token.split(":").slice(1).join(":"), basicCredential(token)].filter((s) => s.length >= 4);
  return secrets.reduce((text, secret) => text.split(secret).join("[token]"), value);
}

/** The forge's API origin: the only one the token goes to. */
const onOrigin = (target: StatusTarget, url: string) => {
  try {
    return new URL(url).origin === new URL(target.apiUrl).origin;
  } catch {
    return false;
  }
};

/** A repository's path in a URL: each part encoded, the slashes kept. */
export const repoPath = (repo: string) => repo.split("/").map(encodeURIComponent).join("/");

/**
 * Sends `request` (built for `target`): the answer, or why none came. Never throws. Tried twice unless `options`
 * says otherwise.
 */
export async function forgeSend(
  target: StatusTarget,
  request: OutboundRequest,
  options: Pick<OutboundOptions, "tries" | "maxBody"> = {},
): Promise<OutboundAnswer> {
  if (!onOrigin(target, request.url))
    return { ok: false, detail: `${request.url.slice(0, 100)} is not on the API's origin: not sent`, tries: 0 };
  try {
    return await calls.send(request, { timeoutMs: DEFAULT_OUTBOUND_TIMEOUT_MS, tries: 2, ...options });
  } catch (error) {
    return { ok: false, detail: String(error), tries: 0 };
  }
}

/** What a failed call says: `<Forge> <what>: <why>`, the token never in it. */
export function problemOf(target: StatusTarget, what: string, answer: OutboundAnswer): string {
  return `${FORGE_NAMES[target.provider]} ${what}: ${redactToken(answer.detail, target.token)}`;
}

/**
 * A question of GitHub's or Gitea's API on the repository, `GET <apiUrl>/repos/<repo><rest>`, asked once (a
 * delivery at the door waits on it), its answer read up to `maxBody` (64 KiB unless said).
 */
export function repoQuestion(target: StatusTarget, rest: string, maxBody?: number): Promise<OutboundAnswer> {
  const url = `${target.apiUrl.replace(/\/+$/, "")}/repos/${repoPath(target.repo)}${rest}`;
  const request: OutboundRequest = { method: "GET", url, headers: authHeaders(target), body: "" };
  return forgeSend(target, request, { tries: 1, ...(maxBody ? { maxBody } : {}) });
}

/** Sends `request`; its answer when it came back 2xx, else undefined with the problem said. Never throws. */
export async function forgeCall(
  target: StatusTarget,
  what: string,
  request: OutboundRequest,
  problems: Problems,
): Promise<OutboundAnswer | undefined> {
  const answer = await forgeSend(target, request);
  if (answer.ok) return answer;
  problems.push(problemOf(target, what, answer));
  return undefined;
}

/** Every item of a list on the forge (bounded like a gate's read), or undefined with the problem said. */
export async function forgeList(
  target: StatusTarget,
  what: string,
  first: string,
  next: Next,
  items: (body: unknown) => unknown[],
  problems: Problems,
): Promise<unknown[] | undefined> {
  let listed: unknown[] = [];
  const read = await boundedRead(
    target,
    FORGE_NAMES[target.provider],
    authHeaders(target),
    { timeoutMs: LIST_TIMEOUT_MS },
    async (bounded) => {
      listed = await pages(bounded, first, next, items, what);
      return [];
    },
  );
  if (read.ok) return listed;
  problems.push(read.error);
  return undefined;
}

/** JSON of a forge's answer, or undefined. */
export function answerJson(answer: OutboundAnswer | undefined): unknown {
  try {
    return JSON.parse(answer?.body ?? "");
  } catch {
    return undefined;
  }
}

/** The `Link: <…>; rel="next"` of GitHub's lists (and Gitea's). */
export const linkNext: Next = (_url, _body, headers) => /<([^>]+)>;\s*rel="next"/.exec(headers.get("link") ?? "")?.[1];
