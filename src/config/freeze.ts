/**
 * Freeze windows (key `freeze`, docs/deploy-control.md "Freeze windows"): when no deploy starts unless forced.
 * Each window is weekly (`Fri 16:00` → `Mon 08:00`, the wall clock of its time zone across daylight-saving changes)
 * or dated (`2026-12-20` → `2027-01-04`, a date as `to` holding that whole day; or ISO date and times). Pure: the
 * checks of a value as written, and which window holds at an instant.
 */
import { addDays, instantOf, isTimeZone, showWall, wallAt, WEEKDAY_NAMES, type WallTime } from "./zone.ts";
import { show } from "./show.ts";

/** One window as configured, its defaults applied. */
export interface FreezeWindow {
  from: string;
  to: string;
  /** @default "UTC" */
  timeZone: string;
  /** @default "freeze" */
  reason: string;
}

/** The freeze in force at an instant, or the next one. */
export interface Freeze {
  reason: string;
  /** When it starts (the next one) or started (the window in force at the instant asked). */
  start: Date;
  /** When no window holds any more. */
  end: Date;
  /** The end as shown: `Mon 08:00 Europe/Berlin` for a weekly window, `2027-01-05 00:00 UTC` for a dated one. */
  until: string;
}

export const DEFAULT_FREEZE_REASON = "freeze";
const FIELDS = ["from", "to", "timeZone", "reason"];
const WEEKLY = /^(mon|tue|wed|thu|fri|sat|sun)\s+([01]\d|2[0-3]):([0-5]\d)$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const DAY_MS = 86_400_000;
/** How far ahead contiguous windows are followed, and a next window looked for. */
const HORIZON_MS = 400 * DAY_MS;
const WEEKLY_HORIZON_MS = 31 * DAY_MS;

type Point =
  | { kind: "weekly"; day: number; hour: number; minute: number }
  | { kind: "date"; wall: WallTime }
  | { kind: "dateTime"; wall: WallTime; offsetMs?: number };

const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** A `from`/`to` value, or undefined when it is none of the three forms. */
function parsePoint(text: string): Point | undefined {
  const weekly = WEEKLY.exec(text.trim());
  if (weekly) {
    const name = weekly[1]!.charAt(0).toUpperCase() + weekly[1]!.slice(1).toLowerCase();
    const day = WEEKDAY_NAMES.indexOf(name as (typeof WEEKDAY_NAMES)[number]);
    return { kind: "weekly", day, hour: Number(weekly[2]), minute: Number(weekly[3]) };
  }
  const date = DATE.exec(text) ?? DATE_TIME.exec(text);
  if (!date) return undefined;
  const [, y, mo, d, h, mi, s, zone] = date;
  const wall: WallTime = { year: +y!, month: +mo!, day: +d!, hour: +(h ?? 0), minute: +(mi ?? 0), second: +(s ?? 0) };
  // 2026-02-30 is no date.
  const check = new Date(Date.UTC(wall.year, wall.month - 1, wall.day));
  if (check.getUTCMonth() !== wall.month - 1 || check.getUTCDate() !== wall.day) return undefined;
  if (h === undefined) return { kind: "date", wall };
  if (!zone) return { kind: "dateTime", wall };
  if (zone === "Z") return { kind: "dateTime", wall, offsetMs: 0 };
  const digits = zone.replace(":", "");
  const offsetMs = (digits[0] === "-" ? -1 : 1) * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3))) * 60_000;
  return { kind: "dateTime", wall, offsetMs };
}

/** The instant a dated point starts (`asEnd`: a date as `to` ends at the end of its day). */
function datedInstant(point: Exclude<Point, { kind: "weekly" }>, zone: string, asEnd: boolean): number {
  if (point.kind === "date") return instantOf(zone, asEnd ? addDays(point.wall, 1) : point.wall);
  if (point.offsetMs !== undefined) {
    const w = point.wall;
    return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second ?? 0) - point.offsetMs;
  }
  return instantOf(zone, point.wall);
}

const FORMS =
  'a weekday and time (like "Fri 16:00"), a date (2026-12-20) or a date and time (2026-12-20T18:00, 2026-12-20T18:00:00Z)';

/** One entry of `freeze`; every problem goes to `problems`. */
function normalizeWindow(raw: unknown, where: string, problems: string[]): FreezeWindow | undefined {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    problems.push(`${where}: expected a mapping (from, to, timeZone, reason), got ${show(raw)}`);
    return undefined;
  }
  const before = problems.length;
  const fields: Record<string, unknown> = {};
  for (const [rawKey, value] of Object.entries(raw)) {
    const key = toCamel(rawKey);
    if (!FIELDS.includes(key)) problems.push(`${where}: unknown key "${rawKey}" (allowed: ${FIELDS.join(", ")})`);
    else if (value !== null && value !== undefined) fields[key] = value;
  }
  const text = (key: string) => {
    const value = fields[key];
    if (value === undefined) return undefined;
    if (typeof value === "string" && value.trim() !== "") return value.trim();
    problems.push(`${where}: ${key}: expected a string, got ${show(value)}`);
    return undefined;
  };
  const timeZone = text("timeZone") ?? "UTC";
  if (!isTimeZone(timeZone))
    problems.push(`${where}: timeZone: unknown time zone ${show(timeZone)} (an IANA name like Europe/Berlin, or UTC)`);
  const reason = (text("reason") ?? DEFAULT_FREEZE_REASON).replace(/[\u0000-\u001f\u007f]+/g, " ");
  const points: Partial<Record<"from" | "to", { text: string; point: Point }>> = {};
  for (const key of ["from", "to"] as const) {
    if (fields[key] === undefined) {
      problems.push(`${where}: "${key}" is required (${FORMS})`);
      continue;
    }
    const value = text(key);
    if (value === undefined) continue;
    const point = parsePoint(value);
    if (point) points[key] = { text: value, point };
    else problems.push(`${where}: ${key}: expected ${FORMS}, got ${show(value)}`);
  }
  const { from, to } = points;
  if (from && to) {
    const weekly = [from, to].filter((p) => p.point.kind === "weekly").length;
    if (weekly === 1)
      problems.push(
        `${where}: from ${show(from.text)} and to ${show(to.text)} must be of the same kind: both a weekday and time (weekly, like "Fri 16:00" to "Mon 08:00") or both dates`,
      );
    else if (weekly === 2 && sameWeekly(from.point, to.point))
      problems.push(`${where}: from and to are the same time of the week: the window would hold no time`);
    else if (weekly === 0 && problems.length === before) {
      const start = datedInstant(from.point as never, timeZone, false);
      const end = datedInstant(to.point as never, timeZone, true);
      if (end <= start) problems.push(`${where}: to ${show(to.text)} is not after from ${show(from.text)}`);
    }
  }
  if (problems.length > before || !from || !to) return undefined;
  return { from: from.text, to: to.text, timeZone, reason };
}

const sameWeekly = (a: Point, b: Point) =>
  a.kind === "weekly" && b.kind === "weekly" && a.day === b.day && a.hour === b.hour && a.minute === b.minute;

/**
 * Checks a `freeze` value: a list of windows (the environment's SERVICE_FREEZE is that list as JSON). Every problem
 * goes to `problems`.
 */
export function normalizeFreeze(value: unknown, where: string, problems: string[], fromEnv = false): FreezeWindow[] {
  let list = value;
  if (fromEnv && typeof value === "string") {
    try {
      list = JSON.parse(value);
    } catch {
      problems.push(`${where}: expected a JSON list of windows (like [{"from":"Fri 16:00","to":"Mon 08:00"}])`);
      return [];
    }
  }
  if (!Array.isArray(list)) {
    problems.push(`${where}: expected a list of windows, each with from and to (and timeZone, reason)`);
    return [];
  }
  return list.flatMap((entry, index) => normalizeWindow(entry, `${where}, window ${index + 1}`, problems) ?? []);
}

interface Span {
  start: number;
  end: number;
  window: FreezeWindow;
}

/** The spans of `window` that start before `untilMs` and end after `fromMs`. */
function spansOf(window: FreezeWindow, fromMs: number, untilMs: number): Span[] {
  const from = parsePoint(window.from)!;
  const to = parsePoint(window.to)!;
  const zone = window.timeZone;
  if (from.kind !== "weekly" || to.kind !== "weekly") {
    const start = datedInstant(from as never, zone, false);
    const end = datedInstant(to as never, zone, true);
    return start < untilMs && end > fromMs ? [{ start, end, window }] : [];
  }
  // The days between the start and the end of one span: a window may wrap the week (Fri → Mon).
  let length = (to.day - from.day + 7) % 7;
  if (length === 0 && to.hour * 60 + to.minute <= from.hour * 60 + from.minute) length = 7;
  const out: Span[] = [];
  // Every day from a week before `fromMs` on, as the zone's calendar says: the starts on `from`'s weekday.
  const first = wallAt(zone, fromMs - 8 * DAY_MS);
  // A week repeats: a month ahead is enough to follow weekly windows that touch (a longer chain is cut there).
  const days = Math.ceil((Math.min(untilMs, fromMs + WEEKLY_HORIZON_MS) - fromMs) / DAY_MS) + 10;
  for (let n = 0; n <= days; n++) {
    const day = addDays(first, n);
    const weekday = (new Date(Date.UTC(day.year, day.month - 1, day.day)).getUTCDay() + 6) % 7;
    if (weekday !== from.day) continue;
    const start = instantOf(zone, { ...day, hour: from.hour, minute: from.minute, second: 0 });
    const end = instantOf(zone, { ...addDays(day, length), hour: to.hour, minute: to.minute, second: 0 });
    if (start < untilMs && end > fromMs && end > start) out.push({ start, end, window });
  }
  return out;
}

/** The end of a span as shown, in its window's zone. */
function untilText(span: Span): string {
  const to = parsePoint(span.window.to)!;
  if (to.kind === "weekly")
    return `${WEEKDAY_NAMES[to.day]} ${pad2(to.hour)}:${pad2(to.minute)} ${span.window.timeZone}`;
  return `${showWall(span.window.timeZone, span.end)} ${span.window.timeZone}`;
}
const pad2 = (n: number) => String(n).padStart(2, "0");

/** The freeze made of the spans holding at `at` and every span that overlaps or touches them after. */
function chainAt(spans: Span[], at: number): Freeze | undefined {
  const holding = spans.filter((s) => s.start <= at && at < s.end);
  if (holding.length === 0) return undefined;
  const start = Math.min(...holding.map((s) => s.start));
  let last = holding.reduce((a, b) => (b.end > a.end ? b : a));
  for (let grew = true; grew; ) {
    grew = false;
    for (const span of spans)
      if (span.start <= last.end && span.end > last.end) {
        last = span;
        grew = true;
      }
  }
  return { reason: last.window.reason, start: new Date(start), end: new Date(last.end), until: untilText(last) };
}

/** The freeze in force at `now` (when several windows overlap or touch: until none holds), or undefined. */
export function freezeAt(windows: FreezeWindow[] | undefined, now: Date): Freeze | undefined {
  if (!windows?.length) return undefined;
  const at = now.getTime();
  return chainAt(
    windows.flatMap((w) => spansOf(w, at, at + HORIZON_MS)),
    at,
  );
}

/** The next freeze to start after `now` (after the one in force, if any), or undefined. */
export function nextFreeze(windows: FreezeWindow[] | undefined, now: Date): Freeze | undefined {
  if (!windows?.length) return undefined;
  const at = now.getTime();
  const spans = windows.flatMap((w) => spansOf(w, at, at + HORIZON_MS));
  const after = chainAt(spans, at)?.end.getTime() ?? at;
  const starts = spans.filter((s) => s.start > after).map((s) => s.start);
  if (starts.length === 0) return undefined;
  return chainAt(spans, Math.min(...starts));
}

/** The windows as `service check` prints them: `weekend: Fri 16:00 → Mon 08:00 Europe/Berlin; …`, or "(none)". */
export function describeFreeze(windows: FreezeWindow[] | undefined): string {
  if (!windows?.length) return "(none)";
  return windows.map((w) => `${w.reason}: ${w.from} → ${w.to} ${w.timeZone}`).join("; ");
}
