import { existsSync, readdirSync } from "node:fs";
import { entryOf, type HistoryEntry, logDir, startMs } from "./entry.ts";
import { LOG_FILE_NAME } from "./record.ts";
import { holderRunning, queuedDeploys, type StoredRequest } from "./requests.ts";

export {
  DISK_WAS_FULL,
  endFromLog,
  type HistoryEntry,
  isFailed,
  logDir,
  preciseStart,
  readDeployRecord,
  resultLabel,
} from "./entry.ts";

/** The deploys in a logs directory by stem (the name without `.json` / `.log`), with the files each has. */
function stemsIn(dir: string): Map<string, Set<string>> {
  try {
    return stemsOf(readdirSync(dir));
  } catch {
    return new Map();
  }
}

/** The deploys among the names of a logs directory's files, by stem, with the files each has. */
export function stemsOf(names: string[]): Map<string, Set<string>> {
  const stems = new Map<string, Set<string>>();
  for (const name of names) {
    if (!LOG_FILE_NAME.test(name)) continue;
    const ext = name.endsWith(".log") ? ".log" : ".json";
    const stem = name.slice(0, -ext.length);
    const files = stems.get(stem) ?? new Set<string>();
    files.add(ext);
    stems.set(stem, files);
  }
  return stems;
}

/**
 * File names carry the start time to the second only: deploys of the same second are ordered by the record's
 * millisecond start time, not by their (random) ids.
 */
const newestFirst = (a: HistoryEntry, b: HistoryEntry) =>
  startMs(b) - startMs(a) || (b.jsonPath < a.jsonPath ? -1 : b.jsonPath > a.jsonPath ? 1 : 0);

/** Every deploy in `.service/logs/`, newest first. Never throws on a bad file: it is listed as corrupt. */
export function listDeploys(cwd: string): HistoryEntry[] {
  const dir = logDir(cwd);
  return [...stemsIn(dir)].map(([stem, files]) => entryOf(dir, stem, files)).sort(newestFirst);
}

/**
 * The newest `limit` deploys that `keep` accepts, in listDeploys' order, reading records only as far as that
 * takes: a second of start times (from the names) at a time, newest first, so the first page of a history of
 * thousands reads a page of records. A record whose start time was edited to another second than its name says is
 * listed among its name's second.
 */
export const newestDeploys = (cwd: string, limit: number, keep: Keep = () => true) =>
  deploysInOrder(cwd, limit, keep, true);

/** The oldest `limit` deploys that `keep` accepts, oldest first (newestDeploys' order reversed), read the same way. */
export const oldestDeploys = (cwd: string, limit: number, keep: Keep = () => true) =>
  deploysInOrder(cwd, limit, keep, false);

type Keep = (entry: HistoryEntry) => boolean;

function deploysInOrder(cwd: string, limit: number, keep: Keep, newest: boolean): HistoryEntry[] {
  const dir = logDir(cwd);
  const bySecond = new Map<string, [string, Set<string>][]>();
  for (const [stem, files] of stemsIn(dir)) {
    const second = stem.slice(0, 20);
    const group = bySecond.get(second);
    if (group) group.push([stem, files]);
    else bySecond.set(second, [[stem, files]]);
  }
  const seconds = [...bySecond.keys()].sort();
  const out: HistoryEntry[] = [];
  for (const second of newest ? seconds.reverse() : seconds) {
    if (out.length >= limit) break;
    const group = bySecond
      .get(second)!
      .map(([stem, files]) => entryOf(dir, stem, files))
      .sort(newestFirst);
    out.push(...(newest ? group : group.reverse()).filter(keep));
  }
  return out.slice(0, limit);
}

/**
 * The deploy named by a full id, an id prefix, or `last`; an error message when none or several match. The id is
 * in the file names: only the records it names are read. Only the deploys `keep` passes count (a token's apps).
 */
export function findDeploy(
  cwd: string,
  ref: string,
  keep: (entry: HistoryEntry) => boolean = () => true,
): HistoryEntry | string {
  const missing = missingLogDir(cwd);
  if (ref === "last")
    return (
      newestDeploys(cwd, 1, keep)[0] ?? (missing ? `no deploys here: ${missing}` : `no deploys in ${logDir(cwd)} yet`)
    );
  const needle = ref.toLowerCase();
  const dir = logDir(cwd);
  // The stem is `<YYYY-MM-DD_HH-mm-ssZ>_<id>`.
  const matches = [...stemsIn(dir)]
    .filter(([stem]) => stem.slice(21).startsWith(needle))
    .map(([stem, files]) => entryOf(dir, stem, files))
    .filter((entry) => entry.id.startsWith(needle) && keep(entry))
    .sort(newestFirst);
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) return `no deploy with id "${ref}" in ${logDir(cwd)}${missing ? ` (${missing})` : ""}`;
  return `"${ref}" matches ${matches.length} deploys (${matches
    .slice(0, 5)
    .map((m) => m.id.slice(0, 12))
    .join(", ")}${matches.length > 5 ? ", …" : ""}): give more of the id`;
}

/** True when `ref` can name a deploy: `last`, or the start of a deploy id (a UUID). */
export function isDeployRef(ref: string): boolean {
  return ref === "last" || /^[0-9a-f][0-9a-f-]{0,35}$/i.test(ref);
}

/**
 * Why there is no history to read, when the log directory does not exist: most likely this is not the
 * service's working directory (the service runs elsewhere, the shell is in the repository).
 */
export function missingLogDir(cwd: string): string | undefined {
  const dir = logDir(cwd);
  if (existsSync(dir)) return undefined;
  return `${dir} does not exist; run service logs in the service's working directory, or point to it with --cwd DIR`;
}

/** An acknowledged deploy that has not started, by id or id prefix; `waiting` is false when it never will. */
export function findQueued(cwd: string, ref: string): { record: StoredRequest; waiting: boolean } | undefined {
  if (ref === "last" || !isDeployRef(ref)) return undefined;
  const [only, ...more] = queuedDeploys(cwd, ref);
  if (!only || more.length > 0) return undefined;
  return { record: only, waiting: holderRunning(only) };
}

/** What `service logs <id>` says of a deploy that waits in the queue; `follow` is the command that follows it. */
export function queuedMessage(record: StoredRequest, follow: string): string {
  return [
    `deploy ${record.id} is queued (since ${record.at}): it starts when the deploys before it have finished`,
    `follow it with: ${follow}`,
  ].join("\n");
}

/** Why a deploy that was queued will not start: the service that held it in its queue is gone. */
export function neverStarted(record: StoredRequest): string {
  return `deploy ${record.id} has not started: the service process that queued it (pid ${record.pid}) is gone; the next start of the service replays it (trigger recovered)`;
}
