/** docs/previews.md "Records": a preview's record is no deploy of the app: the DORA figures leave it out. */
import { describe, expect, test } from "bun:test";
import { doraFigures } from "../../src/history/dora.ts";

const NOW = Date.parse("2026-05-10T12:00:00Z");

function record(trigger: string, hoursAgo: number, ok: boolean) {
  const start = new Date(NOW - hoursAgo * 3_600_000);
  return {
    status: "done",
    trigger,
    startedAt: start.toISOString(),
    finishedAt: new Date(start.getTime() + 60_000).toISOString(),
    result: {
      ok,
      run: { exitCode: ok ? 0 : 1 },
      commit: { sha: "b".repeat(40) },
      previousCommit: { sha: "a".repeat(40) },
    },
  };
}

describe("previews: not in production's DORA figures", () => {
  test("records with trigger preview are not counted, failed or restored", () => {
    const production = [record("webhook", 30, true)];
    const previews = [record("preview", 20, false), record("preview", 10, true)];
    const without = doraFigures(production, "default", 7, NOW);
    const withPreviews = doraFigures([...production, ...previews], "default", 7, NOW);
    expect(without.counted).toBe(1);
    expect(withPreviews).toEqual(without);
  });
});
