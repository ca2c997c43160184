/**
 * docs/admin.md "An app's page", in a real browser: the four DORA figures with their bands and the deploys they
 * rest on, as the API says them, at 1280×800 and 390×844 with no sideways scroll and no serious axe violation.
 */
import { describe, expect, test } from "bun:test";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import {
  hasBrowser,
  hasText,
  launchBrowser,
  loggedIn,
  seriousViolations,
  sidewaysScroll,
} from "../_support/browser.ts";
import { addOkRecords, doraHistory } from "../_support/dora-history.ts";

const browser = hasBrowser("the dashboard's DORA figures test");

describe("the app page's DORA figures", () => {
  test.skipIf(!browser)(
    "each figure with its band and its deploys, as the records say; fits 1280×800 and 390×844",
    async () => {
      const { cwd } = await doraHistory();
      addOkRecords(cwd, "web", 10, 7200);
      await using server = await startAdmin(cwd, { SERVICE_SECRET: undefined });
      const { dora } = await (await fetch(`${server.admin}/api/apps/web/stats`, { headers: bearer() })).json();
      expect(dora.changeFailureRate.band).toBe("high");

      for (const viewport of [
        { width: 1280, height: 800 },
        { width: 390, height: 844 },
      ]) {
        await using context = await launchBrowser({ viewport });
        const page = await loggedIn(context, server.admin);
        await page.getByRole("link", { name: "web", exact: true }).click();
        await page.waitForURL(/\/apps\/web$/);
        const figures = page.locator("#dora .dora");
        await hasText(page.locator("#dora"), (text) => text.includes("Time to restore"));
        expect(await figures.count()).toBe(4);
        const bands = await figures.evaluateAll((spans) => spans.map((span) => span.getAttribute("data-band")));
        expect(bands).toEqual([
          dora.deployFrequency.band,
          dora.leadTime.band,
          dora.changeFailureRate.band,
          dora.timeToRestore.band,
        ]);
        expect(bands).toEqual(["high", "elite", "high", "not enough data"]);
        const texts = await figures.evaluateAll((spans) => spans.map((span) => span.textContent));
        expect(texts).toEqual([
          "2.8 a week high (12 deploys)",
          "2.0 h elite (12 deploys)",
          "7.7 % high (13 deploys)",
          `${texts[3]!.split(" not enough data")[0]} not enough data (1 deploy)`,
        ]);
        expect(await sidewaysScroll(page)).toEqual([]);
        expect(await seriousViolations(page)).toEqual([]);
      }
    },
    120_000,
  );
});
