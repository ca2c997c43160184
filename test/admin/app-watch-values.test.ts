/**
 * docs/admin.md "An app's page": `GET /api/apps/<app>/stats` answers the recent watch values, the watches of the
 * app's last watched deploys as their records keep them (query or command, value, threshold, at, checks, and a
 * breach or cancel), newest first, at most 10; a deploy without a watch is not among them.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import {
  hasBrowser,
  hasText,
  launchBrowser,
  loggedIn,
  seriousViolations,
  sidewaysScroll,
} from "../_support/browser.ts";
import { logFiles, makeRepo, readJson, runCli, tempDir } from "../_support/helpers.ts";

const idOf = (text: string) => /\[deploy\] ([0-9a-f-]{36}) started/.exec(text)![1]!;

describe("an app's recent watch values", () => {
  test("the stats answer the last watched deploys' watches, newest first, at most 10", async () => {
    const repo = makeRepo();
    const config = join(tempDir("service-watch-values-"), "service.yaml");
    const deploy = async (watch: string | null) => {
      repo.push({ "v.txt": `${Math.random()}\n` });
      writeFileSync(config, watch ? `watch:\n${watch.replace(/^/gm, "  ")}\n` : "");
      const ran = await runCli(["deploy"], {
        cwd: repo.clone,
        env: { SERVICE_CONFIG: config, SERVICE_RUN_SCRIPT: "true" },
      });
      return { id: idOf(ran.stdout), code: ran.code };
    };
    const passed = await deploy("forMs: 400\nintervalMs: 200\ncommand: 'true'");
    const notified = await deploy("forMs: 400\nintervalMs: 200\nfailures: 1\nonBreach: notify\ncommand: 'exit 3'");
    const rolled = await deploy("forMs: 400\nintervalMs: 200\nfailures: 1\ncommand: 'exit 3'");
    const unwatched = await deploy(null);
    expect([passed.code, notified.code, rolled.code, unwatched.code]).toEqual([0, 0, 3, 0]);

    await using server = await startAdmin(repo.clone, { SERVICE_CONFIG: config });
    const stats = async () => {
      const res = await fetch(`${server.admin}/api/apps/default/stats`, { headers: bearer() });
      expect(res.status).toBe(200);
      return (await res.json()).watches as { id: string; outcome: string; startedAt: string; watch: any }[];
    };
    const watches = await stats();
    expect(watches.map((each) => [each.id, each.outcome])).toEqual([
      [rolled.id, "rolled_back"],
      [notified.id, "ok"],
      [passed.id, "ok"],
    ]);
    expect(watches[0]!.watch).toMatchObject({ command: "exit 3", value: 3, threshold: 0, checks: 1, breach: true });
    expect(watches[1]!.watch).toMatchObject({ command: "exit 3", value: 3, checks: 1, breach: true });
    expect(watches[2]!.watch).toMatchObject({ command: "true", value: 0, threshold: 0 });
    expect(watches[2]!.watch.checks).toBeGreaterThanOrEqual(2);
    expect(watches[2]!.watch.breach).toBeUndefined();
    // Each is its record's watch, as written.
    const dir = join(repo.clone, ".service", "logs");
    for (const each of watches) {
      const file = logFiles(repo.clone).find((name) => name.endsWith(`_${each.id}.json`))!;
      const record = readJson(join(dir, file));
      expect(each.watch).toEqual(record.result.watch);
      expect(each.startedAt).toBe(record.startedAt);
    }

    // Ten more watched deploys, older than these (their records as the first one's, under older names): the newest
    // ten are answered.
    const first = logFiles(repo.clone).find((name) => name.endsWith(`_${passed.id}.json`))!;
    const record = readJson(join(dir, first));
    for (let i = 0; i < 10; i++) {
      const id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
      const startedAt = `2020-01-01T00:00:${String(10 + i).padStart(2, "0")}.000Z`;
      writeFileSync(
        join(dir, `2020-01-01_00-00-${10 + i}Z_${id}.json`),
        JSON.stringify({ ...record, id, startedAt, result: { ...record.result, id } }),
      );
    }
    const ten = await stats();
    expect(ten).toHaveLength(10);
    expect(ten.slice(0, 3).map((each) => each.id)).toEqual([rolled.id, notified.id, passed.id]);
    expect(ten.slice(3).map((each) => each.startedAt)).toEqual(
      [19, 18, 17, 16, 15, 14, 13].map((s) => `2020-01-01T00:00:${s}.000Z`),
    );

    if (!hasBrowser("the app page's recent watch values")) return;
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      await using context = await launchBrowser({ viewport });
      const page = await loggedIn(context, server.admin);
      await page.goto(`${server.admin}/apps/default`);
      await hasText(page.locator("#watches"), (text) => text.includes("exit 3"));
      const lines = await page.locator("#watches li").allTextContents();
      expect(lines).toHaveLength(10);
      expect(lines[0]).toMatch(/rolled back breach: 3 \(bound 0\), 1 checks over \d+ s · exit 3$/);
      expect(lines[2]).toMatch(/ok passed: 0 \(bound 0\), \d+ checks over \d+ s · true$/);
      expect(await sidewaysScroll(page)).toEqual([]);
      expect(await seriousViolations(page)).toEqual([]);
    }
  }, 120_000);
});
