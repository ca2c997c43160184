/**
 * The DORA figures of the history on disk (dora.ts computes them): the records of the window read once, by the
 * start times their names carry, never more than MAX_DORA_READ of them. `service stats`, the admin API and
 * `/metrics` read them so.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { readNoFollow } from "../system/files.ts";
import { logDir } from "./entry.ts";
import { type DoraFigures, type DoraRecord, doraFigures } from "./dora.ts";
import { stemsOf } from "./read.ts";

/** Records one reading parses at most (of every app); past it, the figures cover the newest ones and say so. */
export const MAX_DORA_READ = 20_000;
const DAY_MS = 86_400_000;

/** The figures of each app named, and whether the window held more records than were read. */
export interface DoraReading {
  figures: DoraFigures[];
  /** True when MAX_DORA_READ records were read before the window's start: the figures cover fewer days. */
  partial: boolean;
}

/** The start time a log file's name says (ms). */
function nameTime(stem: string): number {
  const [date, clock] = stem.slice(0, 20).split("_") as [string, string];
  return Date.parse(`${date}T${clock.slice(0, 8).replaceAll("-", ":")}Z`) || 0;
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
  // A second of margin: a record's own start may be a little before its name's second is over.
  const since = now - days * DAY_MS - 1000;
  const stems = [...stemsOf(names)]
    .filter(([stem, files]) => files.has(".json") && nameTime(stem) >= since)
    .map(([stem]) => stem)
    .sort()
    .reverse();
  const records: DoraRecord[] = [];
  for (const stem of stems.slice(0, MAX_DORA_READ)) {
    try {
      const record = JSON.parse(readNoFollow(join(dir, `${stem}.json`))) as DoraRecord;
      if (record && typeof record === "object") records.push(record);
    } catch {
      // A damaged record tells nothing of the figures.
    }
  }
  return { records, partial: stems.length > MAX_DORA_READ };
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
