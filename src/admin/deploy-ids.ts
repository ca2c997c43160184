/**
 * The one lookup of a deploy an API request names (docs/admin.md "Tokens"): its id or the start of it, or `last`,
 * among the deploys the token sees, the queued ones included. A deploy of an app the token does not see is not
 * there: it never matches, never makes a prefix ambiguous, and no answer names its id or its app. The action is
 * then asked with what this found (the full id), never with the words the request gave.
 */
import { findDeploy, isDeployRef, newestDeploys, type HistoryEntry } from "../history/read.ts";
import { queuedDeploys, type StoredRequest } from "../history/requests.ts";
import { jsonResponse } from "../http/json.ts";

/** What the lookup needs of the API's context: where the history is, and which apps the token sees. */
interface Seen {
  cwd: string;
  /** Whether the token sees the deploys of `app`; unset: every app. */
  visible?(app: string): boolean;
}

const apiError = (status: number, error: string, message: string) => jsonResponse(status, { error, message });

/** A deploy as the token may name it: in the history (it started), or still queued. */
export type NamedDeploy = { id: string; app: string } & (
  | { entry: HistoryEntry; queued?: undefined }
  | { queued: StoredRequest; entry?: undefined }
);

/** Single-app records name no app: they are the `default` app's. */
const appOf = (app: string | null | undefined) => app ?? "default";

/** Shortest start of an id a request may name a deploy by. */
const MIN_REF_CHARS = 4;

/** The ref as an answer quotes it: the request's own words, bounded. */
export const quoted = (ref: string) => JSON.stringify(ref.slice(0, 40));

/**
 * The deploy `ref` names among those the token sees: one deploy; undefined when it names none; or the error answer
 * (400 a ref that is no id, 409 a prefix of several, naming only deploys the token sees).
 */
export function namedDeploy(context: Seen, ref: string): NamedDeploy | Response | undefined {
  if (!isDeployRef(ref) || ref.length < MIN_REF_CHARS)
    return apiError(400, "bad request", "a deploy is named by its id or at least 4 characters of it");
  const sees = (app: string | null | undefined) => !context.visible || context.visible(appOf(app));
  if (ref === "last") {
    const [entry] = newestDeploys(context.cwd, 1, (e) => sees(e.app));
    return entry && { id: entry.id, app: appOf(entry.app), entry };
  }
  const found = findDeploy(context.cwd, ref, (e) => sees(e.app));
  const entries = typeof found === "string" ? [] : [found];
  // A deploy that starts has its log files before its queued marker goes: one deploy, not two.
  const queued = queuedDeploys(context.cwd, ref).filter((q) => sees(q.app) && !entries.some((e) => e.id === q.id));
  const count = entries.length + queued.length;
  if (typeof found === "string" && found.includes(" matches ")) return apiError(409, "ambiguous", found);
  if (count > 1) {
    const ids = [...entries.map((e) => e.id), ...queued.map((q) => q.id)].map((id) => id.slice(0, 12));
    return apiError(
      409,
      "ambiguous",
      `${quoted(ref)} matches ${count} deploys (${ids.join(", ")}): give more of the id`,
    );
  }
  const [entry] = entries;
  if (entry) return { id: entry.id, app: appOf(entry.app), entry };
  const [waiting] = queued;
  return waiting && { id: waiting.id, app: appOf(waiting.app), queued: waiting };
}

/** 404 for a ref that names no deploy the token sees; no directory of the server in it. */
export const noDeploy = (ref: string) => apiError(404, "not found", `no deploy ${quoted(ref)}`);

/** The deploy in the history `ref` names (GET a record, a log), or the error answer; a queued one has neither yet. */
export function deployOf(context: Seen, ref: string): HistoryEntry | Response {
  const named = namedDeploy(context, ref);
  if (named instanceof Response) return named;
  if (!named) return noDeploy(ref);
  if (named.queued)
    return apiError(404, "not found", `deploy ${named.id} is queued: its record and log begin when it starts`);
  return named.entry;
}
