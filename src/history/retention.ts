/**
 * Retention (docs/log-files.md "Log files"): which deploys' files go after each deploy. A deploy that may still run is
 * never removed; one that ended always may be, even when its record could not say so (a full disk).
 */
import { closeSync, readdirSync, readSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { openRegular, removeStaleTemps } from "../system/files.ts";
import { processAlive, OWN_START } from "../system/liveness.ts";
import { forgetPendingRecord, isActiveHere, retryPendingRecords, startKnownHere } from "./open-records.ts";
import { LOG_DIR } from "./record.ts";
import { preciseStart, readDeployRecord, stemsOf } from "./read.ts";
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
 * A stem's start time in ms: the record's millisecond `startedAt` (or, for a deploy of this process whose record
 * is not on disk, the time known here; for a damaged record, the .log's first line), when it falls in the second
 * of its name; else that second.
 */
function preciseStartOf(dir: string, stem: string, second: number): number {
  const jsonPath = join(dir, `${stem}.json`);
  const known = startKnownHere(jsonPath);
  const recorded = known === undefined ? readDeployRecord(jsonPath)?.startedAt : undefined;
  const precise =
    known ??
    Date.parse(typeof recorded === "string" ? recorded : (preciseStart(undefined, join(dir, `${stem}.log`)) ?? ""));
  return precise >= second && precise < second + 1000 ? precise : second;
}

/**
 * The stems to remove, given `stems` newest first by name (the name's second, then the id). A second's deploys are
 * ordered by their millisecond start time, and so read, only when that order decides something: the second that
 * straddles the `keepDeploys` boundary, and the one the `cutoff` falls in. A prune after each deploy of a history of
 * thousands reads no record then, and handles each name once (records can be megabytes).
 */
function beyondRetention(dir: string, stems: string[], keepDeploys: number, cutoff: number): string[] {
  const beyond: string[] = [];
  let index = 0;
  while (index < stems.length) {
    const key = stems[index]!.slice(0, 20);
    let end = index + 1;
    while (end < stems.length && stems[end]!.startsWith(key)) end++;
    const second = secondOf(key);
    const group = stems.slice(index, end);
    const inKeep = end <= keepDeploys;
    const outOfKeep = index >= keepDeploys;
    if (second + 1000 <= cutoff || (outOfKeep && second >= cutoff)) beyond.push(...group);
    else if (!(inKeep && second >= cutoff)) {
      // This second's order matters: by start time, then (as the names do) by id.
      const times = new Map(group.map((stem) => [stem, group.length > 1 ? preciseStartOf(dir, stem, second) : second]));
      group.sort((a, b) => times.get(b)! - times.get(a)! || (b < a ? -1 : b > a ? 1 : 0));
      group.forEach((stem, i) => {
        if (index + i >= keepDeploys || times.get(stem)! < cutoff) beyond.push(stem);
      });
    }
    index = end;
  }
  return beyond;
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
  // Stems sort by start second: newest first.
  const all = [...stemsOf(names).keys()].sort().reverse();
  // Single-app mode counts every deploy in the directory; multi-app mode the app's (each record's head read once).
  const apps = app === undefined ? undefined : appsOf(dir, all);
  const stems = apps ? all.filter((stem) => apps.get(stem) === app) : all;
  const cutoff = keepDays > 0 ? now - keepDays * 86_400_000 : -Infinity;
  const removed: string[] = [];
  for (const stem of beyondRetention(dir, stems, keepDeploys, cutoff)) {
    const jsonPath = join(dir, `${stem}.json`);
    if (mayBeRunning(jsonPath)) continue;
    // The record last, as it came first (history/log.ts): a reader in between never finds the .log alone.
    for (const ext of [".log", ".json"]) rmSync(join(dir, `${stem}${ext}`), { force: true });
    forgetPendingRecord(jsonPath);
    removed.push(stem);
  }
  removeStaleTemps(dir, names);
  retryPendingRecords();
  return removed;
}
