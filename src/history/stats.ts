/**
 * One app's recent deploys at a glance (the dashboard's app page, `GET /api/apps/<app>/stats`): its last deploys
 * with their durations and outcomes, and the success rate and median duration over 7 and 30 days. Bounded: the
 * file names carry the start times, so only the records of the last 30 days (and at least enough for the bars) are
 * read, and never more than MAX_READ of them.
 */
import { readdirSync } from "node:fs";
import { entryOf, type HistoryEntry, logDir, startMs } from "./entry.ts";
import { entryOutcome } from "./filter.ts";
import { stemsOf } from "./read.ts";

/** The deploys the strip of bars shows. */
export const BARS = 50;
/** Records one answer reads at most (of every app: the names do not say whose a deploy is). */
export const MAX_READ = 5000;
/** A deploy this many times the 30-day median duration (or more) is marked slow. */
export const SLOW_FACTOR = 2;

const DAY_MS = 86_400_000;

export interface StatsBar {
  id: string;
  outcome: string;
  startedAt: string;
  durationMs: number | null;
  /** Over SLOW_FACTOR × the 30-day median duration. */
  slow: boolean;
}

export interface StatsWindow {
  days: number;
  /** Deploys started in the window that ended (running and cancelled ones are left out). */
  deploys: number;
  ok: number;
  /** ok / deploys; null without a deploy. */
  successRate: number | null;
  /** The median duration of those deploys; null without one. */
  medianMs: number | null;
}

export interface AppStats {
  app: string;
  /** Newest first. */
  bars: StatsBar[];
  windows: StatsWindow[];
  /** True when MAX_READ records were read before the 30 days were: the figures cover fewer days. */
  partial: boolean;
}

/** The start time a log file's name says (ms). */
function nameTime(stem: string): number {
  const [date, time] = stem.slice(0, 20).split("_") as [string, string];
  return Date.parse(`${date}T${time.slice(0, 8).replaceAll("-", ":")}Z`) || 0;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : Math.round((sorted[middle - 1]! + sorted[middle]!) / 2);
}

/** Counted in the rates: a deploy that ran to an end (cancelled ones were stopped on purpose). */
const counted = (entry: HistoryEntry) => !["running", "cancelled", "refused", "superseded"].includes(entry.status);

function windowOf(entries: HistoryEntry[], days: number, now: number): StatsWindow {
  const since = now - days * DAY_MS;
  const inside = entries.filter((entry) => counted(entry) && startMs(entry) >= since);
  const ok = inside.filter((entry) => entryOutcome(entry) === "ok").length;
  const durations = inside.flatMap((entry) => (entry.durationMs === null ? [] : [entry.durationMs]));
  return {
    days,
    deploys: inside.length,
    ok,
    successRate: inside.length ? ok / inside.length : null,
    medianMs: median(durations),
  };
}

/** `app`'s stats from the history in `cwd` at `now`. */
export function appStats(cwd: string, app: string, now = Date.now()): AppStats {
  const dir = logDir(cwd);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    // No history yet: no deploys.
  }
  const stems = [...stemsOf(names)].sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0));
  const since = now - 30 * DAY_MS;
  const entries: HistoryEntry[] = [];
  let read = 0;
  let partial = false;
  for (const [stem, files] of stems) {
    // A second of margin: a record's own start time may be a little before its name's second is over.
    if (nameTime(stem) < since - 1000 && entries.length >= BARS) break;
    if (read >= MAX_READ) {
      partial = nameTime(stem) >= since;
      break;
    }
    read++;
    const entry = entryOf(dir, stem, files);
    if ((entry.app ?? "default") === app) entries.push(entry);
  }
  entries.sort((a, b) => startMs(b) - startMs(a));
  const windows = [windowOf(entries, 7, now), windowOf(entries, 30, now)];
  const slowOver = windows[1]!.medianMs === null ? null : windows[1]!.medianMs * SLOW_FACTOR;
  const bars = entries.slice(0, BARS).map((entry) => ({
    id: entry.id,
    outcome: entryOutcome(entry),
    startedAt: entry.startedAt,
    durationMs: entry.durationMs,
    slow: slowOver !== null && entry.durationMs !== null && entry.durationMs > slowOver,
  }));
  return { app, bars, windows, partial };
}
