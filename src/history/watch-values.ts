/**
 * The recent watch values of one app (the dashboard's app page, `GET /api/apps/<app>/stats`): the watch results of
 * its last watched deploys as their records keep them (docs/watch.md "The record"), newest first. Bounded: the
 * newest MAX_WATCH_READ records of the history are looked at, and each ended one is parsed once per process.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { readNoFollow } from "../system/files.ts";
import type { DeployResult } from "../types.ts";
import type { WatchResult } from "../watch-types.ts";
import { logDir } from "./entry.ts";
import { LOG_FILE_NAME, outcomeOf } from "./record.ts";

/** Watched deploys one answer lists at most. */
export const WATCH_VALUES = 10;
/** Records one answer looks at most (of every app: the names do not say whose a deploy is). */
export const MAX_WATCH_READ = 5000;

/** One watched deploy: which, when, how it ended, and its watch as its record says it. */
export interface WatchValue {
  id: string;
  startedAt: string;
  outcome: string;
  watch: WatchResult;
}

interface Seen {
  app: string;
  value: WatchValue | null;
}

/** What was read of the ended records, by file: small (the watch's few fields), bounded by the histories read. */
const ended = new Map<string, Seen>();

/** `app`'s last watched deploys in `cwd`'s history, newest first, at most WATCH_VALUES. */
export function watchValues(cwd: string, app: string): WatchValue[] {
  const dir = logDir(cwd);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    // No history yet.
  }
  const files = names
    .filter((name) => name.endsWith(".json") && LOG_FILE_NAME.test(name))
    .sort()
    .reverse()
    .slice(0, MAX_WATCH_READ);
  const values: WatchValue[] = [];
  const seen = new Set<string>();
  for (const name of files) {
    const file = join(dir, name);
    seen.add(file);
    const read = ended.get(file) ?? readOne(file, LOG_FILE_NAME.exec(name)![5]!);
    if (read.app === app && read.value) values.push(read.value);
    if (values.length >= WATCH_VALUES) break;
  }
  for (const file of ended.keys()) if (file.startsWith(dir) && !seen.has(file)) ended.delete(file);
  return values.sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt));
}

/** One record's app and watch; an ended one is kept for the next reading. */
function readOne(file: string, id: string): Seen {
  let record: { status?: unknown; app?: unknown; startedAt?: unknown; result?: Partial<DeployResult> | null };
  try {
    const text = readNoFollow(file);
    // Most records have no watch (an output's quotes are escaped: only a key matches): they are not parsed.
    if (!text.includes('"watch"')) {
      const seen = { app: "", value: null };
      if (!/"status"\s*:\s*"running"/.test(text)) ended.set(file, seen);
      return seen;
    }
    record = JSON.parse(text);
  } catch {
    return { app: "", value: null };
  }
  if (!record || typeof record !== "object") return { app: "", value: null };
  const app = typeof record.app === "string" ? record.app : "default";
  const watch = record.result?.watch;
  const status = typeof record.status === "string" ? record.status : "corrupt";
  const value =
    watch && typeof watch === "object" && typeof record.startedAt === "string"
      ? {
          id,
          startedAt: record.startedAt,
          outcome:
            status === "done"
              ? outcomeOf({ ok: record.result?.ok === true, rolledBack: record.result?.rolledBack === true })
              : status,
          watch,
        }
      : null;
  const seen = { app, value };
  if (status !== "running") ended.set(file, seen);
  return seen;
}
