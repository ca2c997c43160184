/** The one timeout rule (src/ops/deploy-limit.ts): the longest a deploy can take, from which the unit and the proxy take theirs. */
import { describe, expect, test } from "bun:test";
import { deployLimitSeconds } from "../../src/ops/deploy-limit.ts";

describe("deployLimitSeconds", () => {
  test.each([
    [
      "the defaults: pull and run script, 30 min each, plus 60 s",
      { runTimeoutMs: 1_800_000, rollbackOnFailure: false },
      3660,
    ],
    ["with rollback: a second run and the reset", { runTimeoutMs: 1_800_000, rollbackOnFailure: true }, 5520],
    ["a part-second rounds up", { runTimeoutMs: 1_500, rollbackOnFailure: false }, 64],
    [
      "a watch adds forMs and one interval, and the rollback a breach runs: 3 × 1800 + 300 + 15 + 120",
      {
        runTimeoutMs: 1_800_000,
        rollbackOnFailure: false,
        watch: { command: "./check", forMs: 300_000, intervalMs: 15_000 },
      },
      5835,
    ],
    [
      "onBreach notify: no rollback; a check's bound is at least 10 s: 2 × 1800 + 60 + 10 + 60",
      {
        runTimeoutMs: 1_800_000,
        rollbackOnFailure: false,
        watch: { command: "./check", forMs: 60_000, intervalMs: 1_000, onBreach: "notify" as const },
      },
      3730,
    ],
  ])("%s", (_, app, seconds) => {
    expect(deployLimitSeconds([app])).toBe(seconds);
  });

  test("the longest app decides", () => {
    const apps = [
      { runTimeoutMs: 1_000, rollbackOnFailure: true },
      { runTimeoutMs: 600_000, rollbackOnFailure: false },
    ];
    expect(deployLimitSeconds(apps)).toBe(1260);
  });
});
