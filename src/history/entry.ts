/**
 * One deploy of the history as read from its two files (docs/log-files.md "Log files"): its record, or what its
 * name and its .log say when the record is missing or damaged.
 */
import { closeSync, fstatSync, lstatSync, readSync } from "node:fs";
import { join, resolve } from "node:path";
import { openRegular, parseReadingAgain, readNoFollow } from "../system/files.ts";
import type { CommitInfo } from "../types.ts";
import { LOG_DIR, LOG_FILE_NAME, type DeployRecord } from "./record.ts";

/** One deploy as the history shows it, read from its JSON log (or from its file name when that is corrupt). */
export interface HistoryEntry {
  id: string;
  /** ISO start time. */
  startedAt: string;
  /** `unknown`: no record could be written (a full disk), so nothing tells how it ended. */
  status: DeployRecord["status"] | "corrupt" | "unknown";
  app: string | null;
  trigger: string | null;
  /** The forge event and delivery id of a webhook deploy (null when the request carried none). */
  event: string | null;
  delivery: string | null;
  durationMs: number | null;
  ok: boolean | null;
  exitCode: number | null;
  /** The pulled commit was taken back: even with `ok`, what was pushed is not live. */
  rolledBack: boolean;
  /** With releases: the release the deploy built or switched to (docs/releases.md "The record"); null without. */
  release: string | null;
  /** Who started it (docs/log-files.md "Who deployed what"); null in records from before it was kept. */
  actor: string | null;
  /** A deploy of a ref (`service deploy --ref`, the API's `ref`): the ref as it was named. */
  ref: string | null;
  /** It went past a pause (`--force`, `force: true`). */
  forced: boolean;
  /** The commit live when it ended, in words (docs/deploy-control.md "What is live"); null while it runs, and in older records. */
  commit: CommitInfo | null;
  /** The commit it tried (pulled, pushed, built, named), in words; null while it runs, and in older records. */
  target: CommitInfo | null;
  /** A cancelled deploy: who cancelled it (null for a shutdown, and in older records). */
  cancelledBy: string | null;
  /** A refused or superseded request: why (docs/deploy-control.md "Requests"); null otherwise. */
  reason: string | null;
  /** While it runs: what it waits for (`checks`: at a gate); null otherwise. */
  waiting: string | null;
  jsonPath: string;
  logPath: string;
  /** Why the JSON file could not be read (a crash mid-write, an edit by hand). */
  problem?: string;
}

export function logDir(cwd: string): string {
  return resolve(cwd, LOG_DIR);
}

/** One deploy from its stem; `files` says which of its two files exist. */
export function entryOf(dir: string, stem: string, files: Set<string>): HistoryEntry {
  const [, date, hh, mm, ss, id] = LOG_FILE_NAME.exec(`${stem}.json`)!;
  const jsonPath = join(dir, `${stem}.json`);
  const logPath = join(dir, `${stem}.log`);
  const base: HistoryEntry = {
    id: id!,
    startedAt: `${date}T${hh}:${mm}:${ss}Z`,
    status: "corrupt",
    app: null,
    trigger: null,
    event: null,
    delivery: null,
    durationMs: null,
    ok: null,
    exitCode: null,
    rolledBack: false,
    release: null,
    actor: null,
    ref: null,
    forced: false,
    commit: null,
    target: null,
    cancelledBy: null,
    reason: null,
    waiting: null,
    jsonPath,
    logPath,
  };
  // A deploy writes its record first, then creates its .log: an empty .log alone is a deploy that found no room
  // even for the record (a full disk), not a damaged file. A .log with text alone: a crash.
  if (!files.has(".json"))
    return emptyFile(logPath)
      ? { ...base, status: "unknown", problem: DISK_WAS_FULL }
      : {
          ...base,
          startedAt: preciseStart(undefined, logPath) ?? base.startedAt,
          problem: "the .json file is missing",
        };
  let text: string | undefined;
  let record: DeployRecord & { app?: string };
  try {
    // Read again once when it does not parse: its deploy may have been writing it in place (log.ts) at that moment.
    record = parseReadingAgain(() => (text = readNoFollow(jsonPath))) as DeployRecord & { app?: string };
    if (!record || typeof record !== "object" || typeof record.status !== "string")
      throw new Error("not a deploy record");
  } catch (error) {
    const problem = `unreadable JSON log: ${(error as Error).message.split("\n")[0]}`;
    return { ...base, startedAt: preciseStart(text, logPath) ?? base.startedAt, problem };
  }
  // Read defensively: a record edited by hand may lack any field, and a listing must not throw on it.
  // A repaired record's result has only `ok` and `run.exitCode`.
  const result:
    | {
        ok?: boolean;
        run?: { exitCode?: number | null };
        rollback?: { exitCode: number | null };
        rolledBack?: boolean;
        release?: { id?: unknown };
        commit?: unknown;
        target?: unknown;
      }
    | undefined = record.result && typeof record.result === "object" ? record.result : undefined;
  const textOf = (value: unknown) => (typeof value === "string" ? value : null);
  return {
    ...base,
    startedAt: typeof record.startedAt === "string" ? record.startedAt : base.startedAt,
    status: record.status,
    app: record.app ?? null,
    trigger: record.trigger ?? null,
    event: typeof record.event === "string" ? record.event : null,
    delivery: typeof record.delivery === "string" ? record.delivery : null,
    durationMs: record.durationMs ?? null,
    ok: typeof result?.ok === "boolean" ? result.ok : null,
    exitCode: (result?.rollback ? result.rollback.exitCode : result?.run?.exitCode) ?? null,
    // Records from before `rolledBack` existed: a rollback object is the best sign there is.
    rolledBack: typeof result?.rolledBack === "boolean" ? result.rolledBack : Boolean(result?.rollback),
    release: typeof result?.release?.id === "string" ? result.release.id : null,
    actor: textOf(record.actor),
    ref: textOf(record.ref),
    forced: record.forced === true,
    commit: commitOf(result?.commit),
    target: commitOf(result?.target),
    cancelledBy: textOf(record.cancel?.by),
    reason: textOf(record.reason),
    waiting: record.status === "running" ? textOf(record.waiting) : null,
    // The outcome is known, but `service logs <id>` has nothing to show. A running deploy's .log may just not
    // be created yet (it comes right after the record).
    ...(files.has(".log") || record.status === "running" ? {} : { problem: "the .log file is missing" }),
  };
}

/** A record's commit, when it has the shape the service writes (a record edited by hand may not). */
function commitOf(value: unknown): CommitInfo | null {
  const commit = value as Partial<CommitInfo> | null | undefined;
  if (!commit || typeof commit !== "object" || typeof commit.sha !== "string") return null;
  const text = (field: unknown) => (typeof field === "string" ? field : "");
  return { sha: commit.sha, subject: text(commit.subject), author: text(commit.author), date: text(commit.date) };
}

/** The note of a deploy that left only an empty .log. */
export const DISK_WAS_FULL = "outcome unknown (the disk was full)";

/** Whether `file` is an empty regular file (not through a link). */
function emptyFile(file: string): boolean {
  try {
    const st = lstatSync(file);
    return st.isFile() && st.size === 0;
  } catch {
    return false;
  }
}

/**
 * The millisecond start time of a deploy whose record cannot be parsed, so it still sorts among the deploys
 * of the same second: from what is left of the record (a truncated one), else from the .log's first line.
 */
export function preciseStart(jsonText: string | undefined, logPath: string): string | undefined {
  const fromJson = jsonText && /"startedAt"\s*:\s*"([^"]+)"/.exec(jsonText)?.[1];
  if (fromJson && !Number.isNaN(Date.parse(fromJson))) return fromJson;
  try {
    const head = Buffer.alloc(512);
    const fd = openRegular(logPath);
    let read: number;
    try {
      read = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
    const fromLog = /^\[deploy\] [0-9a-f-]{36} started (\S+)/.exec(head.subarray(0, read).toString("utf8"))?.[1];
    if (fromLog && !Number.isNaN(Date.parse(fromLog))) return fromLog;
  } catch {}
  return undefined;
}

/**
 * A deploy that did not succeed: a rolled-back one did not, whatever its redeploy did; a running one has not failed
 * (yet); a refused or superseded request never ran, and is no failure of what is live.
 */
export function isFailed(entry: HistoryEntry): boolean {
  if (["running", "refused", "superseded"].includes(entry.status)) return false;
  return !(entry.status === "done" && entry.ok && !entry.rolledBack);
}

/** A deploy's outcome in one word, as `service logs` and `service status` show it. */
export function resultLabel(entry: HistoryEntry): string {
  if (entry.status === "corrupt") return "corrupt";
  // Under the commit it named (the row's), never as a failure of the live one.
  if ((entry.status === "refused" || entry.status === "superseded") && entry.reason)
    return `${entry.status} (${entry.reason})`;
  if (entry.status !== "done") return entry.status;
  if (!entry.ok) return "FAILED";
  // ok (the redeploy of the previous commit worked, docs/deploy-control.md "Rollback"), but what was pushed is not live.
  return entry.rolledBack ? "rolled back" : "ok";
}

/** Start time in ms for ordering; an unparsable one sorts as the epoch rather than breaking the sort. */
export const startMs = (entry: HistoryEntry) => Date.parse(entry.startedAt) || 0;

/**
 * The end of a record whose deploy ended while the record could not say so (a full disk, then a stop of the
 * service): the `[done]` line the .log ends with is written only when the deploy is over, so its outcome is
 * known. Undefined when the .log does not end with one (the deploy was really cut short).
 */
export function endFromLog(logPath: string): Pick<DeployRecord, "status" | "result" | "note"> | undefined {
  let tail: string;
  try {
    const fd = openRegular(logPath);
    try {
      const size = fstatSync(fd).size;
      const buffer = Buffer.alloc(Math.min(size, 256));
      tail = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, size - buffer.length)).toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const done = /(?:^|\n)\[done\] ok=(true|false) exitCode=(-?\d+|null)\n$/.exec(tail);
  if (!done) return undefined;
  return {
    status: "done",
    result: { ok: done[1] === "true", run: { exitCode: done[2] === "null" ? null : Number(done[2]) } },
    note: "the final record could not be written; the outcome is the .log's [done] line",
  };
}

/** A record read for retention: not through a link, and undefined when it cannot be read. */
export function readDeployRecord(jsonPath: string): DeployRecord | undefined {
  try {
    const record = JSON.parse(readNoFollow(jsonPath)) as DeployRecord;
    return record && typeof record === "object" ? record : undefined;
  } catch {
    return undefined;
  }
}
