/**
 * docs/admin.md "Tokens": the dashboard asks GET /api/whoami for the token's role and shows only the actions it
 * may take: none for a read token, no pause or resume for a deploy token.
 */
import { describe, expect, test } from "bun:test";
import { startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, launchBrowser, loggedIn, shown } from "../_support/browser.ts";
import { TOKEN_VALUES, tokenSetup } from "../_support/token-fixtures.ts";

const browser = hasBrowser("tokens dashboard test");

describe("the dashboard shows the actions the token's role allows", () => {
  test.skipIf(!browser)(
    "a read token sees the apps and no action; a deploy token deploys but neither pauses nor resumes",
    async () => {
      const setup = tokenSetup();
      await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
      const seen = async (token: string, role: string) => {
        await using context = await launchBrowser();
        const page = await loggedIn(context, server.admin, token);
        await page.locator(`body[data-role="${role}"]`).waitFor({ state: "attached" });
        await shown(page.getByRole("heading", { name: "web" }));
        return {
          deploy: await page.getByRole("button", { name: "Deploy now" }).first().isVisible(),
          pause: await page.getByRole("button", { name: "Pause" }).first().isVisible(),
          apps: await page.getByRole("heading", { level: 2 }).allTextContents(),
        };
      };
      expect(await seen(TOKEN_VALUES.grafana, "read")).toEqual({ deploy: false, pause: false, apps: ["web", "api"] });
      expect(await seen(TOKEN_VALUES["ci-web"], "deploy")).toEqual({ deploy: true, pause: false, apps: ["web"] });
      expect(await seen(TOKEN_VALUES.ops, "admin")).toEqual({ deploy: true, pause: true, apps: ["web", "api"] });
    },
    90_000,
  );
});
