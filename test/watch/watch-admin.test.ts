/**
 * docs/watch.md: while a deploy watches, `GET /api/apps` gives its `watching` (what a wall screen reads), `/metrics`
 * says `service_deploy_watching 1`, and the dashboard says "watching (… of 2 min)"; once a cancel ends the watch,
 * all three say it no longer watches.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, hasText, launchBrowser, loggedIn } from "../_support/browser.ts";
import { StreamReader } from "../_support/gate.ts";
import { lastLine, makeRepo, post, runCli, SECRET, tempDir, waitFor } from "../_support/helpers.ts";

const browser = hasBrowser("the dashboard's watching state");

describe("watch: the admin listener (docs/watch.md)", () => {
  test("the API, /metrics and the dashboard say the app is watching, and stop saying it when the watch ends", async () => {
    const repo = makeRepo();
    const service = tempDir("service-watch-admin-");
    const config = join(service, "service.yaml");
    writeFileSync(config, "watch:\n  forMs: 120000\n  intervalMs: 200\n  command: 'true'\n");
    const env = { SERVICE_CONFIG: config, SERVICE_RUN_SCRIPT: "true", SERVICE_REPO_PATH: repo.clone };
    await using server = await startAdmin(service, env);
    const pushed = repo.push({ "v2.txt": "2\n" });
    const stream = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => /\[watch\] [\d.]+ of 2 min: exit 0/.test(stream.text), "the first check");
    const apps = async () => (await (await fetch(`${server.admin}/api/apps`, { headers: bearer() })).json()).apps;
    const metrics = async () => (await fetch(`${server.admin}/metrics`, { headers: bearer() })).text();
    const [watching] = await waitFor(async () => {
      const list = await apps();
      return list[0].watching?.checks >= 1 ? list : undefined;
    }, "the API to say it watches");
    expect(watching.watching).toMatchObject({
      deployId: stream.id(),
      commit: pushed,
      forMs: 120_000,
      failures: 0,
      lastValue: 0,
    });
    expect(watching.watching.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(typeof watching.watching.startedAt).toBe("string");
    expect(await metrics()).toMatch(/^service_deploy_watching\{app="[^"]*"\} 1$/m);
    if (browser) {
      await using context = await launchBrowser();
      const page = await loggedIn(context, server.admin);
      await hasText(page.locator("main"), (text) => /watching \([\d.]+ of 2 min\), last 0/.test(text));
    }
    const cancelled = await runCli(["cancel", stream.id()!], { cwd: service, env });
    expect(cancelled.stdout + cancelled.stderr).toContain("its watch ended, what went live stays");
    expect(lastLine(await stream.done)).toBe("[done] ok=true exitCode=0");
    expect((await apps())[0].watching).toBeNull();
    expect(await metrics()).toMatch(/^service_deploy_watching\{app="[^"]*"\} 0$/m);
  });

  test("a breach with nothing to roll back to fails the deploy, said and counted; the next one rolls back", async () => {
    const repo = makeRepo();
    const service = tempDir("service-watch-breach-");
    const config = join(service, "service.yaml");
    writeFileSync(config, "watch:\n  forMs: 60000\n  intervalMs: 200\n  command: 'false'\n");
    const env = { SERVICE_CONFIG: config, SERVICE_RUN_SCRIPT: "true", SERVICE_REPO_PATH: repo.clone };
    await using server = await startAdmin(service, env);
    // The clone is at the remote's commit: the pull changes nothing, so there is nothing to go back to.
    const first = await (await post(server.url, { secret: SECRET })).text();
    expect(first).toMatch(
      /\[watch\] breach: exit code 1 at .* \(2 checks\); nothing was rolled back: [0-9a-f]+ stays live\n/,
    );
    expect(lastLine(first)).toBe("[done] ok=false exitCode=0");
    repo.push({ "v2.txt": "2\n" });
    const second = await (await post(server.url, { secret: SECRET })).text();
    expect(second).toMatch(/\[watch\] breach: exit code 1 at .*; rolled back\n/);
    expect(lastLine(second)).toBe("[done] ok=true exitCode=0");
    const metrics = await (await fetch(`${server.admin}/metrics`, { headers: bearer() })).text();
    expect(metrics).toMatch(/^service_watch_breaches_total\{app="[^"]*",action="failed"\} 1$/m);
    expect(metrics).toMatch(/^service_watch_breaches_total\{app="[^"]*",action="rolled_back"\} 1$/m);
  });
});
