/**
 * What a forge's pull-request delivery parses into (events-gitlab.ts, events-bitbucket.ts): the event, a delivery
 * that asks nothing of previews (a skip); a fork is an event trust.ts judges. The few readers of a
 * payload's fields they share. Every text read is an outsider's: bounded here, escaped where it is shown.
 */
import type { PullRequestEvent } from "./types.ts";

export type ParsedPullRequest =
  | { event: PullRequestEvent }
  /** Nothing for previews in it (an approval, a description edited): answered `[skipped] <skip>`, not counted. */
  | { skip: string };

export type Json = Record<string, unknown>;

/** Longest title, branch or name kept: they go into logs, state files and comments. */
const MAX_TEXT = 500;

/** A nested field, when every step is an object. */
export function field(value: unknown, ...path: string[]): unknown {
  let at = value;
  for (const key of path) at = at && typeof at === "object" && !Array.isArray(at) ? (at as Json)[key] : undefined;
  return at;
}

/** A string field, cut to MAX_TEXT; "" when it is not a string. */
export function text(value: unknown): string {
  return typeof value === "string" ? value.slice(0, MAX_TEXT) : "";
}

/** A positive safe integer, or undefined. */
export function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** A full commit (40 hex, lowercase), or undefined. */
export function fullCommit(value: unknown): string | undefined {
  return typeof value === "string" && /^[0-9a-f]{40}$/.test(value) ? value : undefined;
}

/** A branch name git could hold: no control characters, no `..`, not empty, no leading `-`. */
export function branchName(value: unknown): string | undefined {
  const name = text(value);
  if (!name || name.startsWith("-") || name.includes("..") || /[\u0000-\u0020\u007f~^:?*[\\]/.test(name))
    return undefined;
  return name;
}
