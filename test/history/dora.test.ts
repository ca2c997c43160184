/**
 * The DORA figures from records alone (docs/log-files.md "DORA figures"): what is counted, what failed, each
 * figure's band at its boundaries, the restore through a rollback or the next ok deploy, and "not enough data".
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bandOf, type DoraRecord, doraFigures } from "../../src/history/dora.ts";
import { readDoraRecords } from "../../src/history/dora-read.ts";
import { leadComing } from "../../src/history/lead.ts";
import { addOkRecords } from "../_support/dora-history.ts";
import { tempDir } from "../_support/helpers.ts";

const NOW = Date.parse("2026-11-28T12:00:00Z");
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let seq = 0;

/** A handmade record: an ok webhook deploy of a new commit, `ago` ms before NOW, lasting a second. */
function record(ago: number, change: Partial<DoraRecord> & { result?: Record<string, unknown> } = {}): DoraRecord {
  seq++;
  const start = NOW - ago;
  return {
    status: "done",
    trigger: "webhook",
    startedAt: new Date(start).toISOString(),
    finishedAt: new Date(start + 1000).toISOString(),
    ...change,
    result: {
      ok: true,
      rolledBack: false,
      run: { exitCode: 0 },
      commit: { sha: `c${seq}` },
      previousCommit: { sha: `c${seq - 1}` },
      lead: { medianSeconds: 600 },
      ...change.result,
    },
  };
}
const failed = (ago: number, extra: Record<string, unknown> = {}) =>
  record(ago, { result: { ok: false, run: { exitCode: 1 }, lead: undefined, ...extra } });

describe('the DORA figures (docs/log-files.md "DORA figures")', () => {
  test.each([
    ["deployFrequency", 1, "elite"],
    ["deployFrequency", 0.999, "high"],
    ["deployFrequency", 1 / 7, "high"],
    ["deployFrequency", 1 / 7 - 0.0001, "medium"],
    ["deployFrequency", 1 / 30, "medium"],
    ["deployFrequency", 1 / 30 - 0.0001, "low"],
    ["leadTime", 86_399, "elite"],
    ["leadTime", 86_400, "high"],
    ["leadTime", 7 * 86_400 - 1, "high"],
    ["leadTime", 7 * 86_400, "medium"],
    ["leadTime", 30 * 86_400 - 1, "medium"],
    ["leadTime", 30 * 86_400, "low"],
    ["changeFailureRate", 0.05, "elite"],
    ["changeFailureRate", 0.0501, "high"],
    ["changeFailureRate", 0.15, "high"],
    ["changeFailureRate", 0.1501, "medium"],
    ["changeFailureRate", 0.3, "medium"],
    ["changeFailureRate", 0.3001, "low"],
    ["timeToRestore", 3599, "elite"],
    ["timeToRestore", 3600, "high"],
    ["timeToRestore", 86_399, "high"],
    ["timeToRestore", 86_400, "medium"],
    ["timeToRestore", 7 * 86_400 - 1, "medium"],
    ["timeToRestore", 7 * 86_400, "low"],
  ] as const)("%s %d is %s", (figure, value, band) => {
    expect(bandOf(figure, value, 5)).toBe(band);
  });

  test("under 5 deploys a figure has no band: not enough data", () => {
    expect(bandOf("leadTime", 10, 4)).toBe("not enough data");
    expect(bandOf("leadTime", null, 50)).toBe("not enough data");
    const few = doraFigures(
      [record(DAY), record(2 * DAY), failed(3 * DAY), record(3 * DAY + HOUR)],
      "default",
      30,
      NOW,
    );
    expect(few.deployFrequency).toEqual({ value: 3 / 30, band: "not enough data", deploys: 3 });
    expect(few.changeFailureRate).toEqual({ value: 1 / 4, band: "not enough data", deploys: 4 });
    expect(few.timeToRestore.band).toBe("not enough data");
    expect(doraFigures([], "default", 7, NOW).leadTime).toEqual({
      value: null,
      band: "not enough data",
      deploys: 0,
      withoutLead: 0,
    });
  });

  test.each<[string, DoraRecord, boolean]>([
    ["an ok deploy of a new commit", record(HOUR), true],
    [
      "a failed one of a new commit (its target)",
      failed(HOUR, { commit: { sha: "x" }, previousCommit: { sha: "x" }, target: { sha: "y" } }),
      true,
    ],
    ["a rollback", record(HOUR, { trigger: "rollback" }), false],
    ["a refusal", record(HOUR, { status: "refused" }), false],
    ["a superseded request", record(HOUR, { status: "superseded" }), false],
    ["a cancelled deploy", record(HOUR, { status: "cancelled" }), false],
    ["an interrupted deploy", record(HOUR, { status: "interrupted" }), false],
    ["a running deploy", record(HOUR, { status: "running" }), false],
    [
      "a deploy of the live commit",
      record(HOUR, { result: { commit: { sha: "a" }, previousCommit: { sha: "a" } } }),
      false,
    ],
    ["one that never reached the run step", record(HOUR, { result: { ok: false, run: { exitCode: null } } }), false],
    ["one whose release was built", record(HOUR, { result: { run: { exitCode: null }, release: { id: "r" } } }), true],
    ["one of another app", record(HOUR, { app: "other" }), false],
    ["one older than the window", record(31 * DAY), false],
  ])("counted or not: %s", (_, one, expected) => {
    expect(doraFigures([one], "default", 30, NOW).counted).toBe(expected ? 1 : 0);
  });

  test("failed: an outcome failed or rolled_back, or a breached watch", () => {
    const records = [
      record(5 * HOUR),
      failed(4 * HOUR),
      record(3 * HOUR, { result: { ok: true, rolledBack: true, lead: undefined } }),
      record(2 * HOUR, { watch: { breach: true } }),
      record(HOUR),
    ];
    const figures = doraFigures(records, "default", 7, NOW);
    expect(figures.counted).toBe(5);
    expect(figures.failed).toBe(3);
    expect(figures.changeFailureRate).toEqual({ value: 3 / 5, band: "low", deploys: 5 });
  });

  test("time to restore: a rolled-back deploy restored within itself, else until the end of the next ok deploy (a rollback too); the median; an unrestored one is said", () => {
    const records = [
      // Failed at -10 h (ends 1 s later), restored by the ok deploy ending at -8 h.
      failed(10 * HOUR),
      record(8 * HOUR),
      // Rolled back within itself.
      record(7 * HOUR, { result: { ok: true, rolledBack: true, lead: undefined } }),
      // Failed at -6 h, restored by a `service rollback` 30 minutes later.
      failed(6 * HOUR),
      record(5.5 * HOUR, { trigger: "rollback" }),
      // Failed at -1 h: nothing since.
      failed(HOUR),
    ];
    const figures = doraFigures(records, "default", 7, NOW);
    expect(figures.timeToRestore).toEqual({
      value: 1800,
      band: "not enough data",
      deploys: 3,
      unrestored: 1,
    });
  });

  test("time to restore of a deploy that rolled itself back: from the start of its switch (or run) phase to the end of its rollback; without phases, its whole duration", () => {
    const at = (ago: number, ms: number) => new Date(NOW - ago + ms).toISOString();
    const phases = (ago: number, live: string, back: string) => [
      { name: "pull", startedAt: at(ago, 0), ms: 1000 },
      { name: live, startedAt: at(ago, 1000), ms: 4000 },
      { name: "health", startedAt: at(ago, 5000), ms: 60_000 },
      { name: back, startedAt: at(ago, 65_000), ms: 5000 },
      { name: `health after ${back}`, startedAt: at(ago, 70_000), ms: 2000 },
    ];
    const rolledBack = (ago: number, extra: Record<string, unknown>) =>
      record(ago, { finishedAt: at(ago, 72_000), result: { ok: true, rolledBack: true, lead: undefined, ...extra } });
    const records = [
      // In place: live from the run's start (+1 s) to the rollback's end (+70 s): 69 s.
      rolledBack(10 * HOUR, { phases: phases(10 * HOUR, "run", "rollback") }),
      // With releases: from the switch's start to the switch back's end: 69 s too, the build before it not counted.
      rolledBack(9 * HOUR, {
        phases: [
          { name: "release", startedAt: at(9 * HOUR, 0), ms: 500 },
          ...phases(9 * HOUR, "switch", "switch back"),
        ],
      }),
      // A record written without phases: from its start to its end, 72 s.
      rolledBack(8 * HOUR, {}),
    ];
    const figures = doraFigures(records, "default", 7, NOW);
    expect(figures.timeToRestore).toEqual({ value: 69, band: "not enough data", deploys: 3, unrestored: 0 });
    const alone = doraFigures([records[2]!], "default", 7, NOW);
    expect(alone.timeToRestore.value).toBe(72);
  });

  test("lead time: the median of the deploys' lead.medianSeconds; records without lead are left out and counted", () => {
    const leads = [100, 200, 300, 400, 500, 600];
    const records = [
      ...leads.map((medianSeconds, i) => record((i + 1) * HOUR, { result: { lead: { medianSeconds } } })),
      record(20 * HOUR, { result: { lead: undefined } }),
    ];
    const figures = doraFigures(records, "default", 7, NOW);
    expect(figures.leadTime).toEqual({ value: 350, band: "elite", deploys: 6, withoutLead: 1 });
    expect(figures.deployFrequency).toEqual({ value: 7 / 7, band: "elite", deploys: 7 });
  });

  test("10 000 small records: every figure as built", () => {
    const records: DoraRecord[] = [];
    // 10 000 deploys over 90 days, one failed in ten, each failure restored by the next deploy.
    const step = (90 * DAY) / 10_000;
    for (let i = 0; i < 10_000; i++) {
      const ago = 90 * DAY - (i + 0.5) * step;
      records.push(
        i % 10 === 0 ? failed(ago) : record(ago, { result: { lead: { medianSeconds: i % 2 ? 3600 : 7200 } } }),
      );
    }
    const figures = doraFigures(records, "default", 90, NOW);
    expect(figures.counted).toBe(10_000);
    expect(figures.failed).toBe(1000);
    expect(figures.deployFrequency).toEqual({ value: 9000 / 90, band: "elite", deploys: 9000 });
    // 5000 ok deploys with an hour, 4000 with two (the failed ones are among the even).
    expect(figures.leadTime).toEqual({ value: 3600, band: "elite", deploys: 9000, withoutLead: 0 });
    expect(figures.changeFailureRate).toEqual({ value: 0.1, band: "high", deploys: 10_000 });
    expect(figures.timeToRestore).toEqual({ value: step / 1000, band: "elite", deploys: 1000, unrestored: 0 });
  });
});

describe("the figures read from the disk wait for a lead read after the `[done]` line", () => {
  test("a record whose lead is still coming is read again at the next reading, and counts its lead then", () => {
    const cwd = tempDir("service-dora-coming-");
    addOkRecords(cwd, "web", 1, 7200);
    const dir = join(cwd, ".service", "logs");
    const file = join(dir, readdirSync(dir).find((name) => name.endsWith(".json"))!);
    const withLead = readFileSync(file, "utf8");
    const record = JSON.parse(withLead);
    delete record.result.lead;
    writeFileSync(file, JSON.stringify(record));
    leadComing.add(file);
    try {
      expect(readDoraRecords(cwd, 30, Date.now()).records[0]!.result!.lead).toBeUndefined();
      writeFileSync(file, withLead);
    } finally {
      leadComing.delete(file);
    }
    expect(readDoraRecords(cwd, 30, Date.now()).records[0]!.result!.lead).toEqual({ medianSeconds: 7200 });
  });
});
