/**
 * docs/admin.md "An app's page", in a real browser: the bars with their axes (duration, start times), the four DORA
 * figures, and what decides the app's deploys (refs, freeze windows and the next, limits, paths, the state now), at
 * 1280×800, 1600×900 and 390×844 with no sideways scroll and no serious axe violation. A read token's page names no
 * directory of the server.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startAdmin } from "../_support/admin-helpers.ts";
import {
  hasBrowser,
  hasText,
  launchBrowser,
  loggedIn,
  seriousViolations,
  sidewaysScroll,
} from "../_support/browser.ts";
import { addOkRecords, doraHistory } from "../_support/dora-history.ts";
import { TOKEN_VALUES, writeToken } from "../_support/token-fixtures.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";

const browser = hasBrowser("the app page's browser test");
const iso = (ms: number) => `${new Date(Date.now() + ms).toISOString().slice(0, 19)}Z`;

describe("an app's page", () => {
  test.skipIf(!browser)(
    "bars with axes, the DORA figures, and what decides its deploys; fits 1280×800, 1600×900 and 390×844",
    async () => {
      const { cwd, repo } = await doraHistory();
      addOkRecords(cwd, "web", 10, 7200);
      const grafana = join(cwd, "grafana.token");
      writeToken(grafana, TOKEN_VALUES.grafana);
      writeServiceYaml(cwd, {
        tokens: [{ name: "grafana", role: "read", file: grafana }],
        apps: [
          {
            name: "web",
            host: "web.example.com",
            path: "/hook",
            repoPath: repo.clone,
            runScript: "sh build.sh",
            branch: "main",
            tags: "v*",
            rollbackOnFailure: true,
            freeze: [{ from: iso(7 * 86_400_000), to: iso(8 * 86_400_000), timeZone: "UTC", reason: "year-end" }],
            limits: { memory: 1073741824, nice: 10 },
            paths: ["src/**", "package.json"],
          },
        ],
      });
      await using server = await startAdmin(cwd, { SERVICE_SECRET: undefined });
      for (const viewport of [
        { width: 1280, height: 800 },
        { width: 1600, height: 900 },
        { width: 390, height: 844 },
      ]) {
        await using context = await launchBrowser({ viewport });
        const page = await loggedIn(context, server.admin, TOKEN_VALUES.grafana);
        await page.goto(`${server.admin}/apps/web`);
        const rules = page.locator("#rules");
        await hasText(rules, (text) => text.includes("Freeze windows"));
        const said = Object.fromEntries(
          await rules
            .locator("dt")
            .evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent ?? ""])),
        );
        expect(said).toMatchObject({
          Now: "deploys as pushes come",
          Deploys: "branch main · tags v*",
          Gate: "none: deploys without waiting for checks",
          "Freeze windows": expect.stringMatching(/^year-end: \S+Z → \S+Z \(UTC\)$/),
          "Next freeze": expect.stringMatching(/^year-end: .+ until \d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC$/),
          Limits: "memory 1.0 GiB · nice 10 · run timeout 30 min",
          Paths: "deploys a push that touches src/** package.json",
          "On failure": "rolls back",
        });
        expect(said.Repository).toBeUndefined();
        expect(await rules.textContent()).not.toContain(repo.clone);
        // The bars' axes: the longest duration and 0 s up the side, the oldest and newest start along the bottom.
        const axis = page.locator(".barchart .x-axis span");
        expect(await axis.count()).toBe(3);
        expect(await page.locator(".barchart .y-axis span").last().textContent()).toBe("0 s");
        expect(await page.locator("svg.bars rect").count()).toBe(14);
        expect(await page.locator("#dora .dora").count()).toBe(4);
        expect(await sidewaysScroll(page)).toEqual([]);
        expect(await seriousViolations(page)).toEqual([]);
      }
    },
    120_000,
  );
});
