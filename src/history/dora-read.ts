/**
 * The DORA figures of the history on disk (dora.ts computes them): the records of the window, by the start times
 * their names carry, never more than MAX_DORA_READ of them, each ended one parsed once per process. `service
 * stats`, the admin API and `/metrics` read them so.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { readNoFollow } from "../system/files.ts";
import { logDir } from "./entry.ts";
import { type DoraFigures, type DoraRecord, doraFigures } from "./dora.ts";
import { leadComing } from "./lead.ts";
import { LOG_FILE_NAME, logStem } from "./record.ts";

/** Records one reading parses at most (of every app); past it, the figures cover the newest ones and say so. */
export const MAX_DORA_READ = 20_000;
const DAY_MS = 86_400_000;

/** The figures of each app named, and whether the window held more records than were read. */
export interface DoraReading {
  figures: DoraFigures[];
  /** True when MAX_DORA_READ records were read before the window's start: the figures cover fewer days. */
  partial: boolean;
}

/** The records in `cwd`'s history that started in the `days` before `now`, newest first. */
export function readDoraRecords(cwd: string, days: number, now: number): { records: DoraRecord[]; partial: boolean } {
  const dir = logDir(cwd);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    // No history yet.
  }
  // Names start with the start time and sort by it: the window's are those at or after its start's name (a second
  // of margin: a record's own start may be a little before its name's second is over).
  const first = logStem(new Date(now - days * DAY_MS - 1000), "").slice(0, 20);
  const stems = names
    .filter((name) => name >= first && name.endsWith(".json") && LOG_FILE_NAME.test(name))
    .map((name) => name.slice(0, -".json".length))
    .sort()
    .reverse();
  const records: DoraRecord[] = [];
  const seen = new Set<string>();
  for (const stem of stems.slice(0, MAX_DORA_READ)) {
    const file = join(dir, `${stem}.json`);
    seen.add(file);
    const known = ended.get(file);
    if (known) {
      records.push(known);
      continue;
    }
    try {
      const record = JSON.parse(readNoFollow(file)) as DoraRecord;
      if (!record || typeof record !== "object") continue;
      const kept = whatCounts(record);
      records.push(kept);
      // What counts of an ended record never changes (what is added later: outbound outcomes, pruned releases), once
      // its lead, read after its `[done]` line, is in it.
      if (record.status !== "running" && !leadComing.has(file)) ended.set(file, kept);
    } catch {
      // A damaged record tells nothing of the figures.
    }
  }
  // The records of this directory that are gone (pruned, or out of the window) leave the cache.
  for (const file of ended.keys()) if (file.startsWith(dir) && !seen.has(file)) ended.delete(file);
  return { records, partial: stems.length > MAX_DORA_READ };
}

/**
 * What the figures read of the ended records, by file: a reading every few seconds (the dashboard, `/metrics`)
 * parses only the records that are new. Small (a few fields each) and bounded by the histories read.
 */
const ended = new Map<string, DoraRecord>();

/** The fields of a record the figures read (dora.ts DoraRecord), without its output and the rest. */
function whatCounts(record: DoraRecord): DoraRecord {
  const { result } = record;
  const sha = (commit: { sha?: unknown } | null | undefined) => (commit ? { sha: commit.sha } : null);
  return {
    status: record.status,
    app: record.app,
    trigger: record.trigger,
    startedAt: record.startedAt,
    finishedAt: record.finishedAt,
    ...(record.watch ? { watch: { breach: record.watch.breach } } : {}),
    result: result
      ? {
          ok: result.ok,
          rolledBack: result.rolledBack,
          run: { exitCode: result.run?.exitCode },
          release: result.release ? {} : undefined,
          commit: sha(result.commit),
          previousCommit: sha(result.previousCommit),
          target: sha(result.target),
          lead: result.lead ? { medianSeconds: result.lead.medianSeconds } : undefined,
          ...(result.watch ? { watch: { breach: result.watch.breach } } : {}),
          // A rolled-back deploy's phases measure its restore (dora.ts restoredWithin).
          ...(result.rolledBack === true && Array.isArray(result.phases) ? { phases: result.phases } : {}),
        }
      : null,
  };
}

/** The figures of each of `apps` over the `days` before `now`, from one reading of the history. */
export function readDora(cwd: string, apps: string[], days: number, now = Date.now()): DoraReading {
  const { records, partial } = readDoraRecords(cwd, days, now);
  return { figures: apps.map((app) => doraFigures(records, app, days, now)), partial };
}

/** The apps the records of a reading name (`default` for the single app's), sorted. */
export function appsIn(records: DoraRecord[]): string[] {
  return [...new Set(records.map((record) => (typeof record.app === "string" ? record.app : "default")))].sort();
}
