/**
 * Wall-clock time in an IANA time zone, without a dependency: `Intl.DateTimeFormat` tells the wall clock of a zone
 * at an instant, and the instant of a wall-clock time is found from the zone's offsets around it.
 */

/** A wall-clock time: month 1-12, day 1-31, hour 0-23. */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second?: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      weekday: "short",
    });
    formats.set(zone, format);
  }
  return format;
}

/** Whether `zone` is a time zone this runtime knows (an IANA name like Europe/Berlin, or UTC). */
export function isTimeZone(zone: string): boolean {
  try {
    formatOf(zone);
    return true;
  } catch {
    return false;
  }
}

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/** The wall clock of `zone` at `ms`, with its weekday (0 = Sunday). */
export function wallAt(zone: string, ms: number): WallTime & { weekday: number; second: number } {
  const parts: Record<string, string> = {};
  for (const part of formatOf(zone).formatToParts(new Date(ms))) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour) % 24,
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: WEEKDAYS.indexOf(parts.weekday ?? ""),
  };
}

const asUtc = (wall: WallTime) =>
  Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second ?? 0);

/** The offset of `zone` from UTC at `ms`, in milliseconds (Europe/Berlin in summer: +7200000). */
export function offsetAt(zone: string, ms: number): number {
  const wall = wallAt(zone, ms);
  return asUtc(wall) - (ms - (((ms % 1000) + 1000) % 1000));
}

/**
 * The instant of a wall-clock time of `zone`. Across a change of offset: a time that happens twice (the clock set
 * back, e.g. 02:30 on the last Sunday of October in Europe/Berlin) is its first instant; a time that never happens
 * (the clock set forward, 02:30 on the last Sunday of March) is read with the offset before the change, so it is as
 * far past the change as it was meant past the hour (03:30 summer time).
 */
export function instantOf(zone: string, wall: WallTime): number {
  const utc = asUtc(wall);
  const before = offsetAt(zone, utc - 86_400_000);
  const after = offsetAt(zone, utc + 86_400_000);
  const fits = [before, after].map((offset) => utc - offset).filter((ms) => offsetAt(zone, ms) === utc - ms);
  if (fits.length > 0) return Math.min(...fits);
  return utc - before;
}

/** `wall` moved by `days` calendar days (the months and years follow). */
export function addDays(wall: WallTime, days: number): WallTime {
  const moved = new Date(Date.UTC(wall.year, wall.month - 1, wall.day + days));
  return { ...wall, year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: moved.getUTCDate() };
}

export const WEEKDAY_NAMES = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"] as const;

const pad = (n: number) => String(n).padStart(2, "0");

/** `2027-01-05 00:00` (seconds only when not 0): the wall clock of `zone` at `ms`. */
export function showWall(zone: string, ms: number): string {
  const w = wallAt(zone, ms);
  const seconds = w.second ? `:${pad(w.second)}` : "";
  return `${w.year}-${pad(w.month)}-${pad(w.day)} ${pad(w.hour)}:${pad(w.minute)}${seconds}`;
}
