/**
 * The dashboard in a real browser: Debian's headless Chromium driven by playwright-core (no browser download).
 * Where no Chromium is installed the browser test is skipped, saying so; the page tests without a browser run
 * everywhere. The docs' screenshots are taken by scripts/screenshots.ts.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Locator } from "playwright-core";
import { defer, makeRepo, tempDir, waitFor } from "../_support/helpers.ts";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { CHROMIUM, CHROMIUM_ARGS, confirmWith, hasBrowser } from "../_support/browser.ts";

const HOSTILE_LINE = `<script>window.__injected = 1</script><img src=x onerror="window.__injected = 2"> building`;

/** A run script that prints a hostile line, then waits for its gate file (the test holds deploys running). */
function gatedScript(): { script: string; gate: string; env: Record<string, string> } {
  const dir = tempDir("service-dashboard-");
  const script = join(dir, "deploy.sh");
  const gate = join(dir, "open");
  writeFileSync(
    script,
    [
      "#!/bin/sh",
      `printf '%s\\n' '${HOSTILE_LINE}'`,
      'while [ ! -f "$DASH_GATE" ]; do sleep 0.05; done',
      "echo finished-the-deploy",
      "",
    ].join("\n"),
  );
  chmodSync(script, 0o755);
  return { script, gate, env: { SERVICE_RUN_SCRIPT: script, DASH_GATE: gate } };
}

/** Waits until the one element `locator` names is shown. */
const shown = (locator: Locator) => locator.waitFor({ state: "visible" });
const hasText = (locator: Locator, check: (text: string) => boolean) =>
  waitFor(async () => check((await locator.textContent()) ?? ""), `${locator} to have the text`);
const counted = (locator: Locator, n: number) =>
  waitFor(async () => (await locator.count()) === n, `${n} of ${locator}`);

async function login(admin: string): Promise<string> {
  const res = await fetch(`${admin}/login`, {
    method: "POST",
    body: new URLSearchParams({ token: ADMIN_TOKEN }),
    redirect: "manual",
  });
  await res.text();
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

describe("dashboard pages", () => {
  test("without a session every dashboard page is the login form (401), the API answers 401, and no page carries the admin token", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "echo ran" });
    const { admin } = server;
    // An app page asks for the login before it says whether the app exists.
    for (const path of ["/", "/apps/default", "/apps/unknown", "/deploys", "/deploys/0123abcd"]) {
      const res = await fetch(`${admin}${path}`);
      expect(res.status).toBe(401);
      const html = await res.text();
      expect(html).toContain('<input id="token" type="password" name="token"');
      expect(html).not.toContain(ADMIN_TOKEN);
    }
    expect((await fetch(`${admin}/api/apps`)).status).toBe(401);
    const wrong = await fetch(`${admin}/login`, {
      method: "POST",
      headers: { accept: "text/html" },
      body: new URLSearchParams({ token: "not-the-token-at-all-0000" }),
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("Wrong admin token.");

    const session = await login(admin);
    for (const path of [
      "/",
      "/apps/default",
      "/deploys",
      "/deploys/0123abcd",
      "/assets/dashboard.js",
      "/assets/dashboard.css",
    ]) {
      const res = await fetch(`${admin}${path}`, { headers: { cookie: session } });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).not.toContain(ADMIN_TOKEN);
      if (!path.startsWith("/assets/")) {
        expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
        expect(text).not.toMatch(/(src|href)="(https?:)?\/\//);
      }
    }
    expect((await fetch(`${admin}/deploys/not..an-id`, { headers: { cookie: session } })).status).toBe(404);
    expect((await fetch(`${admin}/apps/unknown`, { headers: { cookie: session } })).status).toBe(404);
  });
});

const browser = hasBrowser("dashboard browser test");

describe("dashboard in a browser", () => {
  test.skipIf(!browser)(
    "log in, watch a deploy and its log live, cancel, pause and resume, roll back, log out; nothing from another host, no markup from the log",
    async () => {
      const { chromium } = await import("playwright-core");
      const repo = makeRepo();
      const first = repo.head();
      const gated = gatedScript();
      await using server = await startAdmin(repo.clone, gated.env);
      const { admin } = server;
      await using context = await chromium.launchPersistentContext(tempDir("service-chromium-"), {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_ARGS,
        viewport: { width: 1100, height: 720 },
      });
      const elsewhere: string[] = [];
      await using _cleanup = defer(() => writeFileSync(gated.gate, ""));
      const page = context.pages()[0] ?? (await context.newPage());
      page.setDefaultTimeout(20_000);
      page.on("request", (request) => {
        if (!request.url().startsWith(`${admin}/`)) elsewhere.push(request.url());
      });

      // Log in with the form.
      await page.goto(`${admin}/`);
      await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
      await page.getByRole("button", { name: "Log in" }).click();
      const card = page.getByRole("region", { name: "default" });
      await shown(card.getByText("idle"));

      // A deploy appears running; its page follows the log live and shows the end.
      await confirmWith(page, card.getByRole("button", { name: "Deploy now" }));
      await shown(card.getByText("running", { exact: true }));
      await card.locator("dd a").first().click();
      const log = page.locator("#log");
      await hasText(log, (text) => text.includes("window.__injected = 1"));
      expect(await log.textContent()).toContain(HOSTILE_LINE);
      expect(await page.locator("#log script, #log img").count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __injected?: number }).__injected)).toBeUndefined();
      await shown(page.getByRole("button", { name: "Cancel this deploy" }));
      writeFileSync(gated.gate, "");
      await hasText(log, (text) => text.includes("finished-the-deploy"));
      await hasText(page.locator("#outcome"), (text) => text === "Succeeded (exit code 0)");
      await shown(page.getByRole("button", { name: "Roll back to this deploy" }));
      const firstDeploy = page.url();

      // Cancel a running deploy from the apps page.
      rmSync(gated.gate);
      await page.getByRole("link", { name: "Apps" }).click();
      await confirmWith(page, card.getByRole("button", { name: "Deploy now" }));
      await confirmWith(page, card.getByRole("button", { name: "Cancel running deploy" }));
      await shown(card.getByText("cancelled", { exact: true }));

      // A second commit, deployed; then roll back to the first deploy from its page.
      writeFileSync(gated.gate, "");
      const second = repo.push({ "b.txt": "b\n" }, "second");
      await confirmWith(page, card.getByRole("button", { name: "Deploy now" }));
      await waitFor(() => repo.head() === second, "the second commit to be deployed");
      await shown(card.getByText("ok", { exact: true }));
      await page.goto(firstDeploy);
      await confirmWith(page, page.getByRole("button", { name: "Roll back to this deploy" }));
      await page.waitForURL((url) => url.href !== firstDeploy);
      await hasText(page.locator("#outcome"), (text) => text === "Succeeded (exit code 0)");
      expect(repo.head()).toBe(first);
      await hasText(page.locator("#content dl"), (text) => text.includes("rollback"));

      // The history, and its failed-only filter (the cancelled deploy).
      await page.getByRole("link", { name: "Deploy history" }).click();
      await counted(page.locator("tbody tr"), 4);
      await page.getByLabel("Failed only").check();
      await counted(page.locator("tbody tr"), 1);
      await hasText(page.locator("tbody"), (text) => text.includes("cancelled"));

      // Pause with a reason, by keyboard alone; then resume.
      await page.getByRole("link", { name: "Apps" }).click();
      await card.getByLabel("Reason to pause default").focus();
      await page.keyboard.type("release freeze until Monday");
      await page.keyboard.press("Tab");
      await page.keyboard.press("Enter");
      await shown(card.getByText("paused: release freeze until Monday"));
      await confirmWith(page, card.getByRole("button", { name: "Resume" }));
      await shown(card.getByText("idle"));
      // A reason is shown as the text it is.
      await card.getByLabel("Reason to pause default").fill("<b>bold</b> <script>window.__injected = 3</script>");
      await card.getByRole("button", { name: "Pause" }).click();
      await shown(card.getByText("paused: <b>bold</b> <script>window.__injected = 3</script>"));
      expect(await card.locator("b, script").count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __injected?: number }).__injected)).toBeUndefined();
      await confirmWith(page, card.getByRole("button", { name: "Resume" }));
      await shown(card.getByText("idle"));

      // Readable at a phone's width: nothing wider than the screen.
      await page.setViewportSize({ width: 390, height: 800 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.goto(firstDeploy);
      await hasText(page.locator("#outcome"), (text) => text.startsWith("Succeeded"));
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expect(await page.content()).not.toContain(ADMIN_TOKEN);

      // Log out: the dashboard asks for the token again.
      await page.getByRole("button", { name: "Log out" }).click();
      await shown(page.getByLabel("Admin token"));
      await page.goto(`${admin}/deploys`);
      await shown(page.getByLabel("Admin token"));
      expect(elsewhere).toEqual([]);
    },
  );
});
