/**
 * Who started a deploy or acted on one (docs/log-files.md "Who deployed what"): `cli:<user>`, `admin@<address>`,
 * a forge's pusher, `webhook@<address>`, `poll`. An actor string is data, often from a request body: it is cut
 * to a length and holds no control characters, wherever it is shown.
 */
import { shown } from "./shown.ts";
import { unixUser } from "./user.ts";

/** Longest actor kept. */
export const MAX_ACTOR_CHARS = 100;

/** `value` as one line of data: a string as it is shown (shown.ts), its whitespace runs one space, cut. */
export function oneLine(value: unknown, max: number): string | undefined {
  if (typeof value !== "string") return undefined;
  const text = shown(value.slice(0, max * 4))
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
