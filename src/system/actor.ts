/**
 * Who started a deploy or acted on one (docs/log-files.md "Who deployed what"): `cli:<user>`, `admin@<address>`,
 * a forge's pusher, `webhook@<address>`, `poll`. An actor string is data, often from a request body: it is cut
 * to a length and holds no control characters, wherever it is shown.
 */
import { unixUser } from "./user.ts";

/** Longest actor kept. */
export const MAX_ACTOR_CHARS = 100;

/** C0 and C1 controls, DEL, and the invisible marks that reorder or hide text (bidi overrides, line separators). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/g;

/** `value` as one line of data: a string, its control characters stripped, its whitespace runs one space, cut. */
export function oneLine(value: unknown, max: number): string | undefined {
  if (typeof value !== "string") return undefined;
  const text = value
    .slice(0, max * 4)
    .replace(/[\t\n\v\f\r]+/g, " ")
    .replace(CONTROL, "")
    .replace(/ {2,}/g, " ")
    .trim();
  if (!text) return undefined;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `value` as an actor (see oneLine); undefined when it is no string or nothing is left of it. */
export const cleanActor = (value: unknown): string | undefined => oneLine(value, MAX_ACTOR_CHARS);

/** The actor of a command run in a shell (`service deploy`, `service pause` …): `cli:<unix user>`. */
export function cliActor(): string {
  return `cli:${unixUser()}`;
}

/** The actor of a call through the library (`server.rollback()`, `server.pause()` …): `library:<unix user>`. */
export function libraryActor(): string {
  return `library:${unixUser()}`;
}
