/**
 * Bitbucket Cloud's pull request deliveries as pull request events (docs/previews.md "Bitbucket"):
 * `pullrequest:created`, `:updated`, `:fulfilled` (merged), `:rejected` (declined). Bitbucket has no pull refs: the
 * source branch is fetched from the app's own remote, so a pull request from another repository is refused,
 * whatever `fromForks` says. Bitbucket names commits by 12 characters in these deliveries: `head` is that prefix.
 */
import { branchName, count, field, type Json, type ParsedPullRequest, text } from "./event-fields.ts";
import type { PullRequestEvent } from "./types.ts";

export const BITBUCKET_FORK_REFUSAL = "bitbucket: previews of forks are not supported";

const ACTIONS: Record<string, PullRequestEvent["action"]> = {
  "pullrequest:created": "open",
  "pullrequest:updated": "push",
  "pullrequest:fulfilled": "close",
  "pullrequest:rejected": "close",
};

/** A repository as Bitbucket names it: its uuid, else its full name (lowercased). */
function repository(side: unknown): string {
  const uuid = text(field(side, "repository", "uuid"));
  return uuid || text(field(side, "repository", "full_name")).toLowerCase();
}

/**
 * Who a Bitbucket account is, for `user:` entries: the account id, which no one else can take. The nickname is
 * not unique (Bitbucket says so), so it never decides trust.
 */
function account(value: unknown): string {
  return text(field(value, "account_id")).slice(0, 128);
}

/** A Bitbucket delivery as a pull request event (a fork's too, which trust.ts refuses); a skip for any other. */
export function parseBitbucketPullRequest(headers: Headers, payload: Json | undefined): ParsedPullRequest {
  const key = headers.get("x-event-key")?.trim() ?? "";
  const action = ACTIONS[key];
  if (!action) return { skip: `bitbucket: ${text(key).slice(0, 60) || "no"} event: nothing for previews` };
  const pr = field(payload, "pullrequest");
  const number = count(field(pr, "id"));
  if (!number) return { skip: "bitbucket: the body is no pull request" };
  const source = field(pr, "source");
  const destination = field(pr, "destination");
  const from = repository(source);
  const to = repository(destination);
  if (!from || !to) return { skip: `bitbucket: pull request #${number} names no source and destination repository` };
  const hash = text(field(source, "commit", "hash")).toLowerCase();
  const head = /^[0-9a-f]{7,40}$/.test(hash) ? hash : undefined;
  const branch = branchName(field(source, "branch", "name"));
  const base = branchName(field(destination, "branch", "name"));
  if (!head) return { skip: `bitbucket: pull request #${number} names no source commit` };
  if (!branch || !base)
    return { skip: `bitbucket: pull request #${number} names no valid source and destination branch` };
  return {
    event: {
      forge: "bitbucket",
      action,
      number,
      title: text(field(pr, "title")),
      branch,
      base,
      head,
      fetchRef: `refs/heads/${branch}`,
      // A fork is refused whatever previews.fromForks says (trust.ts): Bitbucket has no pull refs to fetch it from.
      fork: from !== to,
      author: account(field(pr, "author")),
      sender: account(field(payload, "actor")),
      labels: [],
      ...(key === "pullrequest:fulfilled" ? { merged: true } : {}),
    },
  };
}
