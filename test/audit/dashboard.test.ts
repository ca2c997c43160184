/**
 * docs/audit.md "On the dashboard": an Audit page for the admin role over every app, in Chromium: the trail's lines,
 * newest first, no serious or critical axe-core violation; another role sees no link, and the page is not found.
 */
import { describe, expect, test } from "bun:test";
import { startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, launchBrowser, loggedIn, seriousViolations, shown } from "../_support/browser.ts";
import { TOKEN_VALUES, tokenSetup } from "../_support/token-fixtures.ts";

const browser = hasBrowser("audit dashboard test");

describe("the dashboard's Audit page", () => {
  test.skipIf(!browser)(
    "an admin sees the lines and filters them; a read token has no link and no page",
    async () => {
      const setup = tokenSetup();
      await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
      {
        await using context = await launchBrowser();
        const page = await loggedIn(context, server.admin, TOKEN_VALUES.ops);
        await page.locator('body[data-audit][data-role="admin"]').waitFor({ state: "attached" });
        await page.getByRole("link", { name: "Audit" }).click();
        await shown(page.getByRole("heading", { name: "Audit" }));
        const login = page.getByRole("row").filter({ hasText: "login ok" });
        await shown(login);
        expect(await login.textContent()).toContain("token:ops@127.0.0.1");
        await shown(page.getByRole("row").filter({ hasText: "started" }));
        // Newest first: the login comes before the start.
        const actions = await page.locator("tbody td[data-label=Action]").allTextContents();
        expect(actions.indexOf("login ok")).toBeLessThan(actions.indexOf("started"));
        expect(await seriousViolations(page)).toEqual([]);
        await page.getByLabel("Who").fill("nobody");
        await page.getByLabel("Who").press("Enter");
        await shown(page.getByText("No audit lines."));
      }
      {
        await using context = await launchBrowser();
        const page = await loggedIn(context, server.admin, TOKEN_VALUES.grafana);
        await page.locator('body[data-role="read"]').waitFor({ state: "attached" });
        expect(await page.getByRole("link", { name: "Audit" }).isVisible()).toBe(false);
        const direct = await page.goto(`${server.admin}/audit`);
        expect(direct?.status()).toBe(404);
      }
    },
    90_000,
  );
});
