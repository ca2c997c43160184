/**
 * docs/admin.md "An app's page": `GET /api/apps/<app>/stats` answers the app's last deploys (outcome, duration, a
 * slow one marked) and the success rate and median duration over 7 and 30 days, as its records say them.
 */
import { describe, expect, test } from "bun:test";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import { makeRepo } from "../_support/helpers.ts";
import { hasFaketime } from "../_support/history-fixtures.ts";
import { statsHistory } from "../_support/stats-history.ts";

interface Entry {
  id: string;
  status: string;
  ok: boolean | null;
  durationMs: number;
  startedAt: string;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : Math.round((sorted[middle - 1]! + sorted[middle]!) / 2);
};

describe("an app's stats", () => {
  test.skipIf(!hasFaketime)(
    "the stats of an app are its records': bars newest first, 7- and 30-day success rates and medians, the slow deploy marked",
    async () => {
      const { cwd } = await statsHistory();
      await using server = await startAdmin(cwd, { SERVICE_SECRET: undefined });
      const entries = (await (
        await fetch(`${server.admin}/api/deploys?limit=50`, { headers: bearer() })
      ).json()) as Entry[];
      expect(entries).toHaveLength(4);
      const res = await fetch(`${server.admin}/api/apps/web/stats`, { headers: bearer() });
      expect(res.status).toBe(200);
      const stats = await res.json();
      expect(stats.app).toBe("web");
      expect(stats.partial).toBe(false);
      expect(stats.links).toBeNull(); // the origin is a path: no forge
      expect(stats.bars.map((bar: { id: string }) => bar.id)).toEqual(entries.map((entry) => entry.id));
      expect(stats.bars.map((bar: { outcome: string }) => bar.outcome)).toEqual(["ok", "ok", "failed", "ok"]);
      const recent = entries.slice(0, 3);
      const week = median(recent.map((entry) => entry.durationMs));
      const month = median(entries.map((entry) => entry.durationMs));
      expect(stats.windows).toEqual([
        { days: 7, deploys: 3, ok: 2, successRate: 2 / 3, medianMs: week },
        { days: 30, deploys: 4, ok: 3, successRate: 3 / 4, medianMs: month },
      ]);
      // The 4 s deploy is over twice the median; the others are not.
      expect(entries[0]!.durationMs).toBeGreaterThan(2 * month);
      expect(stats.bars.map((bar: { slow: boolean }) => bar.slow)).toEqual(
        entries.map((entry) => entry.durationMs > 2 * month),
      );
      expect(stats.bars[0].slow).toBe(true);
    },
    120_000,
  );

  test("an app the config does not name is 404", async () => {
    await using server = await startAdmin(makeRepo().clone);
    const res = await fetch(`${server.admin}/api/apps/nope/stats`, { headers: bearer() });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "not found", message: 'no app named "nope"' });
    const page = await fetch(`${server.admin}/apps/nope`, { headers: bearer() });
    expect(page.status).toBe(404);
    await page.text();
  });
});
