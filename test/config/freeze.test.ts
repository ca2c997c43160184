/**
 * Freeze windows as written and evaluated (docs/deploy-control.md "Freeze windows"): pure functions, the instant
 * passed in. Europe/Berlin changes its clocks on the last Sunday of March (29 March 2026, 02:00 → 03:00) and of
 * October (25 October 2026, 03:00 → 02:00).
 */
import { describe, expect, test } from "bun:test";
import { freezeAt, nextFreeze, normalizeFreeze, type FreezeWindow } from "../../src/config/freeze.ts";
import { instantOf } from "../../src/config/zone.ts";

const at = (iso: string) => new Date(iso);
const WEEKEND: FreezeWindow = { from: "Fri 16:00", to: "Mon 08:00", timeZone: "Europe/Berlin", reason: "weekend" };

function problemsOf(value: unknown, fromEnv = false): string[] {
  const problems: string[] = [];
  normalizeFreeze(value, 'key "freeze"', problems, fromEnv);
  return problems;
}

describe("freeze windows: evaluation", () => {
  test("a weekly window wraps the week and follows the wall clock across the change to summer time", () => {
    // Friday 27 March 16:00 is CET (+1); Monday 30 March 08:00 is CEST (+2).
    expect(freezeAt([WEEKEND], at("2026-03-27T14:59:59Z"))).toBeUndefined();
    const frozen = freezeAt([WEEKEND], at("2026-03-27T15:00:00Z"));
    expect(frozen?.reason).toBe("weekend");
    expect(frozen?.end.toISOString()).toBe("2026-03-30T06:00:00.000Z");
    expect(frozen?.until).toBe("Mon 08:00 Europe/Berlin");
    expect(freezeAt([WEEKEND], at("2026-03-29T01:30:00Z"))?.end.toISOString()).toBe("2026-03-30T06:00:00.000Z");
    expect(freezeAt([WEEKEND], at("2026-03-30T05:59:59Z"))).toBeDefined();
    expect(freezeAt([WEEKEND], at("2026-03-30T06:00:00Z"))).toBeUndefined();
  });

  test("a weekly window follows the wall clock across the change back to winter time", () => {
    // Friday 23 October 16:00 is CEST (+2); Monday 26 October 08:00 is CET (+1).
    expect(freezeAt([WEEKEND], at("2026-10-23T13:59:59Z"))).toBeUndefined();
    expect(freezeAt([WEEKEND], at("2026-10-23T14:00:00Z"))?.start.toISOString()).toBe("2026-10-23T14:00:00.000Z");
    expect(freezeAt([WEEKEND], at("2026-10-26T06:59:59Z"))?.end.toISOString()).toBe("2026-10-26T07:00:00.000Z");
    expect(freezeAt([WEEKEND], at("2026-10-26T07:00:00Z"))).toBeUndefined();
  });

  test("a wall-clock time skipped by the change is read past it; one repeated is its first instant", () => {
    const gap = { year: 2026, month: 3, day: 29, hour: 2, minute: 30 };
    expect(new Date(instantOf("Europe/Berlin", gap)).toISOString()).toBe("2026-03-29T01:30:00.000Z");
    const twice = { year: 2026, month: 10, day: 25, hour: 2, minute: 30 };
    expect(new Date(instantOf("Europe/Berlin", twice)).toISOString()).toBe("2026-10-25T00:30:00.000Z");
    const windows: FreezeWindow[] = [{ from: "Sun 02:30", to: "Sun 04:00", timeZone: "Europe/Berlin", reason: "x" }];
    expect(freezeAt(windows, at("2026-03-29T01:29:59Z"))).toBeUndefined();
    expect(freezeAt(windows, at("2026-03-29T01:30:00Z"))?.end.toISOString()).toBe("2026-03-29T02:00:00.000Z");
  });

  test("a date as to holds that whole day, in the window's time zone", () => {
    const holidays: FreezeWindow = { from: "2026-12-20", to: "2027-01-04", timeZone: "Europe/Berlin", reason: "h" };
    expect(freezeAt([holidays], at("2026-12-19T22:59:59Z"))).toBeUndefined();
    const frozen = freezeAt([holidays], at("2026-12-19T23:00:00Z"));
    expect(frozen?.end.toISOString()).toBe("2027-01-04T23:00:00.000Z");
    expect(frozen?.until).toBe("2027-01-05 00:00 Europe/Berlin");
    expect(freezeAt([holidays], at("2027-01-04T23:00:00Z"))).toBeUndefined();
  });

  test("ISO times: with an offset as written, without one in the window's time zone (UTC by default)", () => {
    const utc: FreezeWindow = { from: "2026-12-20T18:00:00Z", to: "2026-12-20T19:00", timeZone: "UTC", reason: "r" };
    expect(freezeAt([utc], at("2026-12-20T18:30:00Z"))?.until).toBe("2026-12-20 19:00 UTC");
    const local: FreezeWindow = { ...utc, to: "2026-12-20T19:00", timeZone: "Europe/Berlin" };
    expect(freezeAt([local], at("2026-12-20T18:30:00Z"))).toBeUndefined();
    expect(freezeAt([local], at("2026-12-20T17:59:59Z"))).toBeUndefined();
    const offset: FreezeWindow = { ...utc, from: "2026-12-20T19:00+02:00", to: "2026-12-20T20:00+02:00" };
    expect(freezeAt([offset], at("2026-12-20T17:30:00Z"))?.end.toISOString()).toBe("2026-12-20T18:00:00.000Z");
  });

  test("overlapping or touching windows hold until none does, with the reason of the one that ends last", () => {
    const holidays: FreezeWindow = {
      from: "2026-12-21",
      to: "2027-01-04",
      timeZone: "Europe/Berlin",
      reason: "holidays",
    };
    const frozen = freezeAt([WEEKEND, holidays], at("2026-12-19T12:00:00Z"));
    expect(frozen?.reason).toBe("holidays");
    expect(frozen?.end.toISOString()).toBe("2027-01-04T23:00:00.000Z");
    // Without the holidays, the weekend alone.
    expect(freezeAt([WEEKEND], at("2026-12-19T12:00:00Z"))?.end.toISOString()).toBe("2026-12-21T07:00:00.000Z");
  });

  test("the next freeze is the next to start, after the one in force", () => {
    const next = nextFreeze([WEEKEND], at("2026-11-25T12:00:00Z"));
    expect(next?.start.toISOString()).toBe("2026-11-27T15:00:00.000Z");
    expect(next?.end.toISOString()).toBe("2026-11-30T07:00:00.000Z");
    expect(nextFreeze([WEEKEND], at("2026-11-28T12:00:00Z"))?.start.toISOString()).toBe("2026-12-04T15:00:00.000Z");
    const past: FreezeWindow = { from: "2020-01-01", to: "2020-01-02", timeZone: "UTC", reason: "r" };
    expect(nextFreeze([past], at("2026-11-25T12:00:00Z"))).toBeUndefined();
    expect(freezeAt([], at("2026-11-25T12:00:00Z"))).toBeUndefined();
  });
});

describe("freeze windows: checks", () => {
  test("defaults: time zone UTC, reason freeze; snake_case time_zone is read", () => {
    const problems: string[] = [];
    expect(normalizeFreeze([{ from: "Fri 16:00", to: "Mon 08:00" }], "f", problems)).toEqual([
      { from: "Fri 16:00", to: "Mon 08:00", timeZone: "UTC", reason: "freeze" },
    ]);
    expect(
      normalizeFreeze([{ from: "sat 10:00", to: "Sat 11:00", time_zone: "Asia/Tokyo" }], "f", problems)[0],
    ).toMatchObject({ timeZone: "Asia/Tokyo" });
    expect(problems).toEqual([]);
  });

  test("an unknown time zone, a malformed value, mixed kinds, to before from and unknown keys are said", () => {
    expect(problemsOf([{ from: "Fri 16:00", to: "Mon 08:00", timeZone: "Europe/Berlinn" }])).toEqual([
      'key "freeze", window 1: timeZone: unknown time zone "Europe/Berlinn" (an IANA name like Europe/Berlin, or UTC)',
    ]);
    expect(problemsOf([{ from: "Friday 4pm", to: "Mon 08:00" }])[0]).toContain(
      'key "freeze", window 1: from: expected a weekday and time (like "Fri 16:00")',
    );
    expect(problemsOf([{ from: "2026-02-30", to: "2026-03-01" }])[0]).toContain('got "2026-02-30"');
    expect(problemsOf([{ from: "Fri 16:00", to: "2026-12-20" }])[0]).toContain("must be of the same kind");
    expect(problemsOf([{ from: "2027-01-04", to: "2026-12-20" }])).toEqual([
      'key "freeze", window 1: to "2026-12-20" is not after from "2027-01-04"',
    ]);
    expect(problemsOf([{ from: "Fri 16:00", to: "Mon 08:00", until: "x" }])).toEqual([
      'key "freeze", window 1: unknown key "until" (allowed: from, to, timeZone, reason)',
    ]);
    expect(problemsOf([{ from: "Fri 16:00" }])[0]).toContain('window 1: "to" is required');
    expect(problemsOf({ from: "Fri 16:00", to: "Mon 08:00" })[0]).toContain("expected a list of windows");
    expect(problemsOf([{ from: "Fri 16:00", to: "Fri 16:00" }])[0]).toContain("the same time of the week");
  });

  test("the environment's form is the list as JSON", () => {
    const problems: string[] = [];
    const windows = normalizeFreeze('[{"from":"2026-12-20","to":"2027-01-04"}]', "SERVICE_FREEZE", problems, true);
    expect(windows).toHaveLength(1);
    expect(problemsOf("not json", true)[0]).toContain("expected a JSON list of windows");
  });
});
