/**
 * `service stats` (docs/cli.md): the four DORA figures per app from the history, as text or JSON, over 7, 30 or 90
 * days; a bad option is one line and exit 1.
 */
import { describe, expect, test } from "bun:test";
import { runCli } from "../_support/helpers.ts";
import { addOkRecords, doraHistory } from "../_support/dora-history.ts";

describe("service stats (docs/cli.md)", () => {
  test("real deploys: counted, failed, lead from the commits' dates, the restore by the next ok deploy; not enough data under 5", async () => {
    const { cwd } = await doraHistory();
    const json = await runCli(["stats", "--json"], { cwd });
    expect(json.code).toBe(0);
    const [web] = JSON.parse(json.stdout);
    expect(web).toMatchObject({ app: "web", days: 30, counted: 3, failed: 1 });
    expect(web.deployFrequency).toEqual({ value: 2 / 30, band: "not enough data", deploys: 2 });
    expect(web.changeFailureRate).toEqual({ value: 1 / 3, band: "not enough data", deploys: 3 });
    expect(web.leadTime.deploys).toBe(2);
    expect(web.leadTime.withoutLead).toBe(0);
    // The median of two days (the first) and of the fix's own median: its commits are the broken one (a day) and
    // the fix (an hour), the failed deploy having changed nothing live. Plus the seconds the deploys took.
    const expected = (2 * 86_400 + (86_400 + 3600) / 2) / 2;
    expect(web.leadTime.value).toBeGreaterThanOrEqual(expected);
    expect(web.leadTime.value).toBeLessThan(expected + 60);
    expect(web.timeToRestore).toMatchObject({ band: "not enough data", deploys: 1, unrestored: 0 });
    expect(web.timeToRestore.value).toBeGreaterThanOrEqual(0);

    const text = await runCli(["stats"], { cwd });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("app web, last 30 days: 3 deploys counted, 1 failed");
    expect(text.stdout).toMatch(/change failure rate +33\.3 % +not enough data +\(3 deploys\)/);
  });

  test("with enough deploys each figure has its band; --days and --app choose", async () => {
    const { cwd } = await doraHistory();
    // Ten ok deploys with a lead of two hours, 100 to 91 hours ago: 12 ok, 13 counted, 1 failed.
    addOkRecords(cwd, "web", 10, 7200);
    const json = JSON.parse((await runCli(["stats", "--app", "web", "--days", "7", "--json"], { cwd })).stdout);
    expect(json).toHaveLength(1);
    expect(json[0].deployFrequency).toEqual({ value: 12 / 7, band: "elite", deploys: 12 });
    expect(json[0].leadTime).toEqual({ value: 7200, band: "elite", deploys: 12, withoutLead: 0 });
    expect(json[0].changeFailureRate).toEqual({ value: 1 / 13, band: "high", deploys: 13 });
    const text = (await runCli(["stats", "--days", "7"], { cwd })).stdout;
    expect(text).toMatch(/deploy frequency +1\.7 a day +elite +\(12 deploys\)/);
    expect(text).toMatch(/lead time +2\.0 h +elite +\(12 deploys\)/);
    expect(text).toMatch(/change failure rate +7\.7 % +high +\(13 deploys\)/);
    expect(text).toMatch(/time to restore +\S+( \S+)? +not enough data +\(1 deploy\)/);
  });

  test.each([
    [["stats", "--days", "10"], "--days 10: expected 7, 30 or 90"],
    [["stats", "--app", "nope"], 'no app named "nope" (apps: web)'],
  ])("%p: one line, exit 1", async (args, message) => {
    const { cwd } = await doraHistoryLight();
    const run = await runCli(args, { cwd });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(message);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });
});

/** A configured app without deploys: enough for the refusals. */
async function doraHistoryLight(): Promise<{ cwd: string }> {
  const { tempDir } = await import("../_support/helpers.ts");
  const { writeServiceYaml } = await import("../_support/webhook-fixtures.ts");
  const cwd = tempDir("service-dora-");
  writeServiceYaml(cwd, { apps: [{ name: "web", host: "w", path: "/hook", repoPath: cwd, runScript: "true" }] });
  return { cwd };
}
