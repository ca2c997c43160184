/**
 * The dashboard's history page filters by app, outcome and time (docs/admin.md "The dashboard"), in a real
 * browser (Debian's Chromium through playwright-core; skipped where none is installed). The filters live in
 * the page's URL, so a reload or a shared link keeps them.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { ADMIN_TOKEN, adminUrl } from "../_support/admin-helpers.ts";
import { startServer, tempDir, waitFor } from "../_support/helpers.ts";
import { hasFaketime, twoAppHistory } from "../_support/history-fixtures.ts";

const CHROMIUM = process.env.SERVICE_TEST_CHROMIUM ?? "/usr/bin/chromium";
const ready = existsSync(CHROMIUM) && hasFaketime;

describe('the dashboard\'s history filters (docs/admin.md "The dashboard")', () => {
  test.skipIf(!ready)(
    "app, outcome and since narrow the table, and stay in the URL across a reload",
    async () => {
      const { chromium } = await import("playwright-core");
      const cwd = await twoAppHistory();
      await using server = await startServer(cwd, { SERVICE_ADMIN_PORT: "0", SERVICE_ADMIN_TOKEN: ADMIN_TOKEN });
      const admin = adminUrl(server);
      const context = await chromium.launchPersistentContext(tempDir("service-chromium-"), {
        executablePath: CHROMIUM,
        headless: true,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
      });
      try {
        const page = context.pages()[0] ?? (await context.newPage());
        page.setDefaultTimeout(20_000);
        await page.goto(`${admin}/deploys`);
        await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
        await page.getByRole("button", { name: "Log in" }).click();
        await page.getByRole("link", { name: "Deploy history" }).click();
        const rows = page.locator("tbody tr");
        const apps = async () => (await rows.locator("td:nth-child(2)").allTextContents()).join(",");
        const showing = (expected: string) => waitFor(async () => (await apps()) === expected, `rows ${expected}`);
        await showing("api,web,web");

        await page.getByLabel("App").selectOption("web");
        await showing("web,web");
        await page.getByLabel("Since").selectOption("24h");
        await showing("web");
        expect(new URL(page.url()).search).toBe("?app=web&since=24h");
        await page.reload();
        await showing("web");
        expect(await page.getByLabel("App").inputValue()).toBe("web");

        await page.getByLabel("App").selectOption("");
        await page.getByLabel("Outcome").selectOption("failed");
        await showing("api");
        await page.getByLabel("Outcome").selectOption("cancelled");
        await waitFor(
          async () => (await page.locator("tbody").textContent()) === "No deploys match these filters.",
          "the empty row",
        );
      } finally {
        await context.close();
      }
    },
    60_000,
  );
});
