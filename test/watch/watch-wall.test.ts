/**
 * docs/admin.md "The wall" and docs/watch.md, in a real browser: while a real deploy watches (a `command` check that
 * passes as long as a file the test holds is absent), the wall's tile says "watching" with its progress (the time
 * so far of the whole, the checks, the last value) and the dashboard says it too; once the test creates the file,
 * the next check fails, the breach rolls back, and the tile says the outcome and the commit live again. Each step
 * waits for what the page shows, never for a time.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, hasText, launchBrowser, loggedIn } from "../_support/browser.ts";
import { StreamReader } from "../_support/gate.ts";
import { lastLine, makeRepo, post, SECRET, tempDir } from "../_support/helpers.ts";

const browser = hasBrowser("the wall's watching tile");

describe.skipIf(!browser)("watch: the wall and the dashboard during a real watch", () => {
  test("the tile shows the watching state with its progress, then the breach's outcome and the commit live again", async () => {
    const repo = makeRepo();
    const before = repo.head();
    const service = tempDir("service-watch-wall-");
    const config = join(service, "service.yaml");
    const breach = join(service, "breach");
    writeFileSync(
      config,
      `watch:\n  forMs: 120000\n  intervalMs: 200\n  failures: 1\n  command: 'test ! -e ${breach}'\n`,
    );
    const env = { SERVICE_CONFIG: config, SERVICE_RUN_SCRIPT: "true", SERVICE_REPO_PATH: repo.clone };
    await using server = await startAdmin(service, env);
    await using context = await launchBrowser({ viewport: { width: 1280, height: 800 } });
    const dashboard = await loggedIn(context, server.admin);
    const wall = await context.newPage();
    wall.setDefaultTimeout(20_000);
    await wall.goto(`${server.admin}/wall`);
    const tile = wall.locator(".tile").first();
    await hasText(tile, (text) => text.includes("no deploy yet"));

    const pushed = repo.push({ "v2.txt": "2\n" }, "second");
    const stream = new StreamReader(await post(server.url, { secret: SECRET }));
    // Two checks passed: the tile says so, its time so far of the 2 minutes, and the meter holds the same.
    await hasText(tile, (text) => /watching \(\d+ s of 2 min\), ([2-9]|\d\d+) checks, 0 failed, now 0/.test(text));
    expect(await tile.getAttribute("data-state")).toBe("watching");
    const meter = await tile
      .locator("progress")
      .evaluate((node: HTMLProgressElement) => ({ hidden: node.hidden, max: node.max, value: node.value }));
    expect(meter).toMatchObject({ hidden: false, max: 120_000 });
    expect(meter.value).toBeGreaterThan(0);
    expect(meter.value).toBeLessThan(120_000);
    expect(await tile.locator(".live code").textContent()).toBe(pushed.slice(0, 8));
    await hasText(dashboard.locator("main"), (text) => /watching \([\d.]+ of 2 min\), last 0/.test(text));

    writeFileSync(breach, "");
    expect(await stream.done).toMatch(/\[watch\] breach: exit code 1 at .* \(1 check\); rolled back\n/);
    expect(lastLine(await stream.done)).toBe("[done] ok=true exitCode=0");
    await hasText(tile, (text) => text.includes("last rolled back"));
    expect(await tile.getAttribute("data-state")).toBe("idle");
    expect(await tile.getAttribute("data-last")).toBe("rolled_back");
    expect(await tile.locator("progress").evaluate((node: HTMLProgressElement) => node.hidden)).toBe(true);
    expect(await tile.locator(".state").textContent()).toBe("idle");
    await hasText(tile.locator(".live code"), (text) => text === before.slice(0, 8));
    await hasText(dashboard.locator("main"), (text) => text.includes("rolled back") && !text.includes("watching ("));
  }, 120_000);
});
