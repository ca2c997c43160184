/**
 * docs/admin.md "An app's page", its previews, in a real browser: each preview listed (title, branch, head, URL,
 * port, outcome, status) at 1280×800 and 390×844 with no sideways scroll and no serious axe violation; a hostile
 * title and branch stay text; Tear down asks first and the preview goes; a read token sees no action; the apps
 * page counts them. With SERVICE_SCREENSHOTS set to a directory, the page at 1280 px is photographed there
 * (docs/dashboard-previews.png).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startAdmin } from "../_support/admin-helpers.ts";
import {
  confirmWith,
  hasBrowser,
  hasText,
  launchBrowser,
  loggedIn,
  seriousViolations,
  shown,
  sidewaysScroll,
} from "../_support/browser.ts";
import { makeRepo, tempDir, waitFor } from "../_support/helpers.ts";
import {
  deliverPullRequest,
  githubPullRequest,
  previewOf,
  previewState,
  previewsKey,
  pushPullHead,
} from "../_support/pull-requests.ts";
import { TOKEN_VALUES, writeToken } from "../_support/token-fixtures.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";

const browser = hasBrowser("the previews' browser test");
const HOSTILE_TITLE = `<img src=x onerror="window.__pwned=1"> Fix the cart`;
const HOSTILE_BRANCH = "feat/<b>bold</b>";

describe("an app's previews on the dashboard", () => {
  test.skipIf(!browser)(
    "listed with their actions at 1280×800 and 390×844; outsiders' text stays text; Tear down asks, then it goes",
    async () => {
      const repo = makeRepo();
      const cwd = tempDir();
      const grafana = join(cwd, "grafana.token");
      writeToken(grafana, TOKEN_VALUES.grafana);
      writeServiceYaml(cwd, {
        repoPath: repo.clone,
        runScript: "true",
        path: "/hook",
        previews: previewsKey(cwd),
        tokens: [{ name: "grafana", role: "read", file: grafana }],
      });
      await using server = await startAdmin(cwd);
      const heads = { 41: pushPullHead(repo, 41), 42: pushPullHead(repo, 42) };
      await deliverPullRequest(
        server,
        githubPullRequest(41, heads[41], { title: HOSTILE_TITLE, branch: HOSTILE_BRANCH }),
      );
      await deliverPullRequest(
        server,
        githubPullRequest(42, heads[42], { title: "Add search", branch: "feature/search" }),
      );
      await waitFor(() => previewOf(cwd, 41, ["running"]) && previewOf(cwd, 42, ["running"]), "both previews");

      for (const viewport of [
        { width: 1280, height: 800 },
        { width: 390, height: 844 },
      ]) {
        await using context = await launchBrowser({ viewport });
        const page = await loggedIn(context, server.admin);
        await page.goto(`${server.admin}/apps/default`);
        const rows = page.locator("#previews tbody tr");
        await hasText(page.locator("#previews"), (text) => text.includes("#42 Add search"));
        expect(await rows.count()).toBe(2);
        const hostile = page.locator('#previews tr[data-number="41"]');
        expect(await hostile.textContent()).toContain(HOSTILE_TITLE);
        expect(await hostile.textContent()).toContain(HOSTILE_BRANCH);
        expect(await hostile.textContent()).toContain(heads[41].slice(0, 8));
        expect(await hostile.locator("a").getAttribute("href")).toBe("https://pr-41.preview.example.com");
        expect(await page.locator("#previews img, #previews b").count()).toBe(0);
        expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
        await shown(hostile.getByRole("button", { name: "Tear down the preview of #41" }));
        expect(await sidewaysScroll(page)).toEqual([]);
        expect(await seriousViolations(page)).toEqual([]);
        if (viewport.width === 1280 && process.env.SERVICE_SCREENSHOTS)
          await page.screenshot({
            path: join(process.env.SERVICE_SCREENSHOTS, "dashboard-previews.png"),
            fullPage: true,
          });
      }

      // A read token sees the list, and no action.
      {
        await using context = await launchBrowser({ viewport: { width: 1280, height: 800 } });
        const page = await loggedIn(context, server.admin, TOKEN_VALUES.grafana);
        await page.goto(`${server.admin}/apps/default`);
        await hasText(page.locator("#previews"), (text) => text.includes("#42 Add search"));
        await page.locator("body[data-role=read]").waitFor();
        expect(
          await page.locator("#previews button").evaluateAll((all) => all.filter((b) => b.checkVisibility()).length),
        ).toBe(0);
        expect(
          await page
            .locator("#previews th")
            .evaluateAll((all) => all.filter((th) => th.checkVisibility()).map((th) => th.textContent)),
        ).not.toContain("Actions");
      }

      // Tear down, asked first; the apps page counts what is left.
      await using context = await launchBrowser({ viewport: { width: 1280, height: 800 } });
      const page = await loggedIn(context, server.admin);
      await page.goto(`${server.admin}/apps/default`);
      const row = page.locator('#previews tr[data-number="42"]');
      await shown(row);
      const question = await confirmWith(page, row.getByRole("button", { name: "Tear down the preview of #42" }));
      expect(question).toBe(
        "Tear down the preview of #42 'Add search'? Its teardown script runs, then its directory and port go.",
      );
      await row.waitFor({ state: "detached" });
      expect(previewState(cwd).previews.map((p) => p.number)).toEqual([41]);
      await page.goto(`${server.admin}/`);
      await hasText(page.locator(".app"), (text) => text.includes("1 preview of pull requests"));
    },
    180_000,
  );
});
