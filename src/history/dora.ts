/**
 * The four DORA figures of an app, after DORA 2024 (docs/log-files.md "DORA figures"), computed from its deploy
 * records alone: deploy frequency, lead time, change failure rate and time to restore, each with its band and the
 * number of deploys it rests on. Pure and linear in the records: 10 000 of them take a few milliseconds.
 */
import { outcomeOf } from "./record.ts";

/** What a record must hold for the figures (a deploy record, read defensively: any field may be missing). */
export interface DoraRecord {
  status?: unknown;
  app?: unknown;
  trigger?: unknown;
  startedAt?: unknown;
  finishedAt?: unknown;
  watch?: { breach?: unknown } | null;
  result?: {
    ok?: unknown;
    rolledBack?: unknown;
    run?: { exitCode?: unknown } | null;
    release?: unknown;
    commit?: { sha?: unknown } | null;
    previousCommit?: { sha?: unknown } | null;
    target?: { sha?: unknown } | null;
    lead?: { medianSeconds?: unknown } | null;
    watch?: { breach?: unknown } | null;
    phases?: unknown;
  } | null;
}

export type Band = "elite" | "high" | "medium" | "low" | "not enough data";

/** One figure: its value (null without one), its band and the deploys it rests on. */
export interface DoraFigure {
  value: number | null;
  band: Band;
  deploys: number;
}

export interface DoraFigures {
  app: string;
  days: number;
  /** Counted deploys in the window, and the failed ones among them. */
  counted: number;
  failed: number;
  /** Ok counted deploys per day. */
  deployFrequency: DoraFigure;
  /** Seconds: the median of the ok counted deploys' `lead.medianSeconds`. */
  leadTime: DoraFigure & { withoutLead: number };
  /** failed / counted. */
  changeFailureRate: DoraFigure;
  /** Seconds: the median time from a failed deploy's end until a known-good commit was live again. */
  timeToRestore: DoraFigure & { unrestored: number };
}

/** Under this many deploys a figure has no band. */
export const MIN_DEPLOYS = 5;
export const DORA_DAYS = [7, 30, 90] as const;
const DAY = 86_400;

/** The bands' upper bounds (after DORA 2024): a value within the first is elite, the second high, the third medium. */
const BANDS = {
  // Deploys per day: at least once a day, a week, a month.
  deployFrequency: { bounds: [1, 1 / 7, 1 / 30], higherIsBetter: true, inclusive: true },
  // Seconds: under a day, a week, a month.
  leadTime: { bounds: [DAY, 7 * DAY, 30 * DAY], higherIsBetter: false, inclusive: false },
  // Ratio: 5 %, 15 %, 30 % or less.
  changeFailureRate: { bounds: [0.05, 0.15, 0.3], higherIsBetter: false, inclusive: true },
  // Seconds: under an hour, a day, a week.
  timeToRestore: { bounds: [3600, DAY, 7 * DAY], higherIsBetter: false, inclusive: false },
} as const;

const NAMES = ["elite", "high", "medium"] as const;

/** The band of `value` for `figure`, or "not enough data" under MIN_DEPLOYS. */
export function bandOf(figure: keyof typeof BANDS, value: number | null, deploys: number): Band {
  if (value === null || deploys < MIN_DEPLOYS) return "not enough data";
  const { bounds, higherIsBetter, inclusive } = BANDS[figure];
  for (const [i, bound] of bounds.entries()) {
    const within = higherIsBetter ? value >= bound : inclusive ? value <= bound : value < bound;
    if (within) return NAMES[i]!;
  }
  return "low";
}

const sha = (commit: { sha?: unknown } | null | undefined) => (typeof commit?.sha === "string" ? commit.sha : null);
const time = (value: unknown) => (typeof value === "string" ? Date.parse(value) : Number.NaN);

/** A record's outcome as the history says it (filter.ts entryOutcome), or null for one that did not end. */
function outcome(record: DoraRecord): string | null {
  if (record.status !== "done" || !record.result) return null;
  return outcomeOf({ ok: record.result.ok === true, rolledBack: record.result.rolledBack === true });
}

/**
 * Counted: a production deploy (not a rollback, refusal, superseded, cancelled, interrupted or running one) that
 * tried a commit other than the one live before it and reached the run step (its script ran, or a release was built).
 */
export function isCounted(record: DoraRecord): boolean {
  const { result } = record;
  // Only a deploy that ended: not refused, superseded, cancelled, interrupted or running.
  if (!result || record.status !== "done") return false;
  if (record.trigger === "rollback") return false;
  const tried = sha(result.target) ?? sha(result.commit);
  if (!tried || tried === sha(result.previousCommit)) return false;
  const ran = typeof result.run?.exitCode === "number";
  return ran || (typeof result.release === "object" && result.release !== null);
}

/** A counted deploy that failed, was rolled back, or breached its watch. */
export function isFailedDeploy(record: DoraRecord): boolean {
  const said = outcome(record);
  const breached = record.watch?.breach === true || record.result?.watch?.breach === true;
  return said === "failed" || said === "rolled_back" || breached;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = values.sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * `app`'s figures over the `days` before `now` (ms), from `records` in any order (of any app: the others are left
 * out; `default` is the single app's, whose records name none). A deploy belongs to the window by its start.
 */
export function doraFigures(records: DoraRecord[], app: string, days: number, now: number): DoraFigures {
  const since = now - days * DAY * 1000;
  const mine = records
    .filter((record) => (typeof record.app === "string" ? record.app : "default") === app)
    // Not previews: a pull request's preview is no deploy of the app.
    .filter((record) => record.trigger !== "preview")
    .map((record) => ({ record, start: time(record.startedAt), end: time(record.finishedAt) }))
    .filter(({ start }) => Number.isFinite(start))
    .sort((a, b) => a.start - b.start);
  // The ends of the app's ok deploys (any trigger: a rollback restores too), oldest first, for the restores.
  const okEnds = mine
    .filter(({ record, end }) => outcome(record) === "ok" && !isFailedDeploy(record) && Number.isFinite(end))
    .map(({ end }) => end)
    .sort((a, b) => a - b);
  let counted = 0;
  let ok = 0;
  let withoutLead = 0;
  const leads: number[] = [];
  const restores: number[] = [];
  let unrestored = 0;
  for (const { record, start, end } of mine) {
    if (start < since || start > now || !isCounted(record)) continue;
    counted++;
    if (!isFailedDeploy(record)) {
      ok++;
      const lead = record.result?.lead?.medianSeconds;
      if (typeof lead === "number" && Number.isFinite(lead)) leads.push(lead);
      else withoutLead++;
      continue;
    }
    if (!Number.isFinite(end)) unrestored++;
    // Rolled back: restored within itself.
    else if (outcome(record) === "rolled_back") restores.push(restoredWithin(record, start, end));
    else {
      const next = firstAfter(okEnds, end);
      if (next === undefined) unrestored++;
      else restores.push((next - end) / 1000);
    }
  }
  const failed = counted - ok;
  const frequency = ok / days;
  const lead = median(leads);
  const rate = counted ? failed / counted : null;
  const restore = median(restores);
  return {
    app,
    days,
    counted,
    failed,
    deployFrequency: { value: frequency, band: bandOf("deployFrequency", frequency, ok), deploys: ok },
    leadTime: { value: lead, band: bandOf("leadTime", lead, leads.length), deploys: leads.length, withoutLead },
    changeFailureRate: { value: rate, band: bandOf("changeFailureRate", rate, counted), deploys: counted },
    timeToRestore: {
      value: restore,
      band: bandOf("timeToRestore", restore, restores.length),
      deploys: restores.length,
      unrestored,
    },
  };
}

/** A phase of a record's `phases`, read defensively. */
type Phase = { name: string; start: number; end: number };

/**
 * Seconds a deploy that rolled itself back had its failed commit live: from the start of its `switch` phase (with
 * releases) or else its `run` phase, to the end of its `rollback` (`switch back`) phase. A record without those
 * phases: its whole duration, from `start` to `end` (an upper bound).
 */
function restoredWithin(record: DoraRecord, start: number, end: number): number {
  const phases: Phase[] = (Array.isArray(record.result?.phases) ? record.result.phases : [])
    .filter(
      (p): p is { name: string; startedAt: string; ms: number } =>
        typeof p?.name === "string" && typeof p.ms === "number",
    )
    .map((p) => ({ name: p.name, start: time(p.startedAt), end: time(p.startedAt) + p.ms }))
    .filter((p) => Number.isFinite(p.end));
  const named = (...names: string[]) => phases.find((p) => names.includes(p.name));
  const live = named("switch") ?? named("run");
  const back = named("rollback", "switch back");
  if (live && back && back.end >= live.start) return (back.end - live.start) / 1000;
  return Math.max(0, end - start) / 1000;
}

/** The first of the sorted `ends` after `end` (binary search), or undefined. */
function firstAfter(ends: number[], end: number): number | undefined {
  let low = 0;
  let high = ends.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (ends[middle]! > end) high = middle;
    else low = middle + 1;
  }
  return ends[low];
}
