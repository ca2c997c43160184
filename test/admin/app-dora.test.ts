/**
 * docs/admin.md "An app's page" and "Metrics": `GET /api/apps/<app>/stats` answers the DORA figures beside the
 * stats it had, and `/metrics` has their four gauges, computed from the records when it is read.
 */
import { describe, expect, test } from "bun:test";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import { runCli, waitFor } from "../_support/helpers.ts";
import { addOkRecords, doraHistory } from "../_support/dora-history.ts";

const promtool = Bun.which("promtool") ?? undefined;

/** The value of one sample line, by its full name with labels. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("the DORA figures on the admin listener", () => {
  test("GET /api/apps/<app>/stats: the figures as service stats says them, with the bars and windows it had; ?days chooses; a bad one is 400", async () => {
    const { cwd } = await doraHistory();
    addOkRecords(cwd, "web", 10, 7200);
    await using server = await startAdmin(cwd, { SERVICE_SECRET: undefined });
    const stats = await (await fetch(`${server.admin}/api/apps/web/stats`, { headers: bearer() })).json();
    expect(stats.bars).toHaveLength(14);
    expect(stats.windows.map((w: { days: number }) => w.days)).toEqual([7, 30]);
    const [cli] = JSON.parse((await runCli(["stats", "--app", "web", "--json"], { cwd })).stdout);
    expect(stats.dora).toEqual({ ...cli, partial: false });
    expect(stats.dora).toMatchObject({ app: "web", days: 30, counted: 13, failed: 1 });
    expect(stats.dora.changeFailureRate).toEqual({ value: 1 / 13, band: "high", deploys: 13 });

    const week = await (await fetch(`${server.admin}/api/apps/web/stats?days=7`, { headers: bearer() })).json();
    expect(week.dora.days).toBe(7);
    expect(week.dora.deployFrequency).toEqual({ value: 12 / 7, band: "elite", deploys: 12 });

    const bad = await fetch(`${server.admin}/api/apps/web/stats?days=10`, { headers: bearer() });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "bad request", message: 'days: expected 7, 30 or 90, got "10"' });
  });

  test("/metrics: the four gauges per app over 30 days, as the API says them, read again from the records", async () => {
    const { cwd } = await doraHistory();
    await using server = await startAdmin(cwd, { SERVICE_SECRET: undefined });
    const metrics = async () => (await fetch(`${server.admin}/metrics`, { headers: bearer() })).text();
    const text = await metrics();
    const { dora } = await (await fetch(`${server.admin}/api/apps/web/stats`, { headers: bearer() })).json();
    expect(sample(text, 'service_dora_deploys_per_day{app="web"}')).toBe(dora.deployFrequency.value);
    expect(sample(text, 'service_dora_lead_time_seconds{app="web"}')).toBe(dora.leadTime.value);
    expect(sample(text, 'service_dora_change_failure_ratio{app="web"}')).toBe(1 / 3);
    expect(sample(text, 'service_dora_time_to_restore_seconds{app="web"}')).toBe(dora.timeToRestore.value);
    expect(text).toContain("# TYPE service_dora_deploys_per_day gauge");
    if (promtool) {
      const checked = Bun.spawnSync([promtool, "check", "metrics"], { stdin: new TextEncoder().encode(text) });
      expect(`${checked.stdout}${checked.stderr}`).toBe("");
      expect(checked.exitCode).toBe(0);
    }
    // New records: a later reading (the figures are kept a few seconds) says them.
    addOkRecords(cwd, "web", 10, 7200);
    const changed = await waitFor(async () => {
      const now = sample(await metrics(), 'service_dora_change_failure_ratio{app="web"}');
      return now === 1 / 13 ? now : undefined;
    }, "the gauges to follow the records");
    expect(changed).toBe(1 / 13);
  });
});
