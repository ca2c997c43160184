/**
 * Retention (docs/log-files.md "Log files"): which deploys' files go after each deploy. A deploy that may still run is
 * never removed; one that ended always may be, even when its record could not say so (a full disk).
 */
import { closeSync, readdirSync, readSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { openRegular, removeStaleTemps } from "../system/files.ts";
import { processAlive, OWN_START } from "../system/liveness.ts";
import { forgetPendingRecord, isActiveHere, retryPendingRecords, startKnownHere } from "./log.ts";
import { LOG_DIR, LOG_FILE_NAME } from "./record.ts";
import { preciseStart, readDeployRecord } from "./read.ts";
import { topLevelString } from "./json-head.ts";

/**
 * Whether a deploy may still be running, so retention must keep its files: one this process runs now, or one
 * whose record says running and whose process is another live one. A deploy of this process that ended is
 * not running even when its record could not be finished (a full disk), nor one whose process is gone.
 */
function mayBeRunning(jsonPath: string): boolean {
  if (isActiveHere(jsonPath)) return true;
  const record = readDeployRecord(jsonPath);
  if (record?.status !== "running" || typeof record.pid !== "number") return false;
  if (record.pid === process.pid && (record.pidStart === undefined || record.pidStart === OWN_START)) return false;
  return processAlive(record.pid, record.pidStart);
}

/**
 * Each stem's start time in ms: the second in its name, refined to the record's millisecond `startedAt` when
 * other deploys started in the same second (only then is the record read: records can be megabytes), unless
 * that second's deploys are kept whatever their order: all among the newest `keepDeploys` by second, and none
 * older than `cutoff`. Their order changes nothing, so a prune after each deploy does not read every record of
 * a busy second again.
 */
function startTimes(dir: string, stems: string[], keepDeploys: number, cutoff: number): Map<string, number> {
  const perSecond = new Map<string, number>();
  for (const stem of stems) perSecond.set(stem.slice(0, 20), (perSecond.get(stem.slice(0, 20)) ?? 0) + 1);
  const settled = new Set<string>();
  let newer = 0;
  for (const [key, count] of [...perSecond].sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))) {
    newer += count;
    if (newer > keepDeploys) break;
    if (secondOf(key) >= cutoff) settled.add(key);
  }
  const times = new Map<string, number>();
  for (const stem of stems) {
    const key = stem.slice(0, 20);
    const second = secondOf(key);
    let ms = second;
    if (perSecond.get(key)! > 1 && !settled.has(key)) {
      const jsonPath = join(dir, `${stem}.json`);
      // A deploy of this process may have no record on a full disk: its start time is known here.
      const known = startKnownHere(jsonPath);
      const recorded = readDeployRecord(jsonPath)?.startedAt;
      const precise =
        known ??
        Date.parse(typeof recorded === "string" ? recorded : (preciseStart(undefined, join(dir, `${stem}.log`)) ?? ""));
      if (precise >= second && precise < second + 1000) ms = precise;
    }
    times.set(stem, ms);
  }
  return times;
}

/** The time of a stem's first 20 characters, `YYYY-MM-DD_HH-mm-ssZ`. */
function secondOf(key: string): number {
  const [, date, hh, mm, ss] = /^(\d{4}-\d{2}-\d{2})_(\d{2})-(\d{2})-(\d{2})Z$/.exec(key)!;
  return Date.parse(`${date}T${hh}:${mm}:${ss}Z`);
}

/** How much of a record is read for its app: the writer puts `app` near the top, and records can be megabytes. */
const APP_HEAD_BYTES = 16 * 1024;

/**
 * The app of each record read so far, by logs directory and stem: a record's app never changes, so a prune after
 * each deploy reads only the records that are new since the last one (the rest are forgotten with their files).
 */
const appsOfRecords = new Map<string, Map<string, string | undefined>>();

/** The app a record names, from its head only. Undefined for a single-app record; null for an unreadable file. */
function readAppOf(jsonPath: string): string | undefined | null {
  let fd: number | undefined;
  try {
    fd = openRegular(jsonPath);
    const head = Buffer.alloc(APP_HEAD_BYTES);
    return topLevelString(head.subarray(0, readSync(fd, head, 0, head.length, 0)).toString("utf8"), "app");
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The apps of `stems` in `dir`, each record read once (an unreadable one is tried again next time). */
function appsOf(dir: string, stems: string[]): Map<string, string | undefined> {
  const known = appsOfRecords.get(dir) ?? new Map<string, string | undefined>();
  const now = new Map<string, string | undefined>();
  for (const stem of stems) {
    if (known.has(stem)) {
      now.set(stem, known.get(stem));
      continue;
    }
    const app = readAppOf(join(dir, `${stem}.json`));
    if (app !== null) now.set(stem, app);
  }
  appsOfRecords.set(dir, now);
  return now;
}

/**
 * Retention: keeps the files of the newest `keepDeploys` deploys, and (when `keepDays` > 0) only those started
 * in the last `keepDays` days. In multi-app mode (`app` given) it counts that app's deploys only, so one busy
 * app never removes another's history. A deploy still running is never removed; one that ended always may be.
 * Links are removed, never followed. Then the temp files of dead writers go, and records that did not fit
 * are tried again in the room made. Returns the removed stems.
 */
export function pruneLogs(
  cwd: string,
  keepDeploys: number,
  keepDays: number,
  now = Date.now(),
  app?: string,
): string[] {
  const dir = resolve(cwd, LOG_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const all = [...new Set(names.filter((n) => LOG_FILE_NAME.test(n)).map((n) => n.replace(/\.(json|log)$/, "")))];
  // Single-app mode counts every deploy in the directory; multi-app mode the app's (each record's head read once).
  const apps = app === undefined ? undefined : appsOf(dir, all);
  const stems = apps ? all.filter((stem) => apps.get(stem) === app) : all;
  const cutoff = keepDays > 0 ? now - keepDays * 86_400_000 : -Infinity;
  const started = startTimes(dir, stems, keepDeploys, cutoff);
  // Newest first by start time; the name alone orders only to the second (then by the random id).
  stems.sort((a, b) => started.get(b)! - started.get(a)! || (b < a ? -1 : b > a ? 1 : 0));
  const removed: string[] = [];
  stems.forEach((stem, index) => {
    if (index < keepDeploys && started.get(stem)! >= cutoff) return;
    const jsonPath = join(dir, `${stem}.json`);
    if (mayBeRunning(jsonPath)) return;
    for (const ext of [".json", ".log"]) rmSync(join(dir, `${stem}${ext}`), { force: true });
    forgetPendingRecord(jsonPath);
    removed.push(stem);
  });
  removeStaleTemps(dir, names);
  retryPendingRecords();
  return removed;
}
