/**
 * docs/admin.md "The wall", in a real browser: ten apps' tiles, each in the state the API says (idle, deploying with
 * its phase, waiting for a slot, frozen with its catch-up, paused, last outcome and age), opened by a read token's
 * kiosk session through the form `/wall?kiosk=1` shows; all ten in view on a 1600×900 screen; no sideways scroll
 * and no serious axe violation at 1280×800, 1600×900 and 390×844; the tiles follow the service without a reload.
 * (The watching state's tile, during a real watch and after its breach, is test/watch/watch-wall.test.ts's.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import type { Page } from "playwright-core";
import {
  hasBrowser,
  hasText,
  launchBrowser,
  loggedIn,
  seriousViolations,
  sidewaysScroll,
} from "../_support/browser.ts";
import { TOKEN_VALUES } from "../_support/token-fixtures.ts";
import { apps, type Wall, WALL_APPS, wallService } from "../_support/wall-apps.ts";

const browser = hasBrowser("the wall's browser test");
const SIZES = [
  { width: 1280, height: 800 },
  { width: 1600, height: 900 },
  { width: 390, height: 844 },
];

/** The kiosk's form on `/wall?kiosk=1`, filled with the read token: the wall. */
async function kiosk(page: Page, admin: string): Promise<void> {
  page.setDefaultTimeout(20_000);
  await page.goto(`${admin}/wall?kiosk=1`);
  await page.getByLabel("Read token").fill(TOKEN_VALUES.grafana);
  await page.getByRole("button", { name: "Open the wall" }).click();
  await page.waitForURL(/\/wall\?kiosk=1$/);
}

const tile = (page: Page, app: string) => page.locator(`.tile[data-app="${app}"]`);

describe.skipIf(!browser)("the wall", () => {
  let wall: Wall;
  beforeAll(async () => {
    wall = await wallService();
  }, 120_000);
  afterAll(async () => {
    writeFileSync(wall.go, "");
    await wall.server.stop();
  });

  test("each tile says its app's state; all in view at 1600×900; no sideways scroll, no serious axe violation", async () => {
    for (const viewport of SIZES) {
      await using context = await launchBrowser({ viewport });
      const page = context.pages()[0] ?? (await context.newPage());
      await kiosk(page, wall.server.admin);
      await hasText(tile(page, "billing"), (text) => text.includes("deploying: run"));
      expect(await page.locator(".tile").count()).toBe(WALL_APPS.length);
      const states = await page
        .locator(".tile")
        .evaluateAll((tiles) =>
          Object.fromEntries(tiles.map((t) => [t.getAttribute("data-app"), t.getAttribute("data-state")])),
        );
      expect(states).toEqual({
        web: "idle",
        api: "idle",
        worker: "idle",
        reports: "idle",
        billing: "deploying",
        search: "waiting",
        auth: "frozen",
        mailer: "paused",
        cdn: "idle",
        docs: "idle",
      });
      expect(await tile(page, "search").locator(".state").textContent()).toBe("waiting for a build slot");
      expect(await tile(page, "auth").locator(".state").textContent()).toMatch(/^frozen until .*: audit$/);
      expect(await tile(page, "auth").locator(".extra").textContent()).toContain("1 waiting: 1 push by dana refused");
      expect(await tile(page, "mailer").locator(".state").textContent()).toBe("paused: database migration review");
      expect(await tile(page, "reports").locator(".last").textContent()).toMatch(/^last failed \d+ s ago$/);
      expect(await tile(page, "web").locator(".last").textContent()).toMatch(/^last ok \d+ s ago$/);
      expect(await tile(page, "web").locator(".live code").textContent()).toMatch(/^[0-9a-f]{8}$/);
      expect(await tile(page, "docs").locator(".last").textContent()).toBe("no deploy yet");
      // A kiosk links nowhere else.
      expect(await page.locator("a").count()).toBe(0);
      if (viewport.width === 1600) {
        const below = await page
          .locator(".tile")
          .evaluateAll((tiles) => tiles.filter((t) => t.getBoundingClientRect().bottom > window.innerHeight).length);
        expect(below).toBe(0);
      }
      expect(await sidewaysScroll(page)).toEqual([]);
      expect(await seriousViolations(page)).toEqual([]);
    }
  }, 180_000);

  test("a logged-in session's wall: each tile's name links to its app's page, and the dashboard's links are there", async () => {
    await using context = await launchBrowser({ viewport: SIZES[0]! });
    const page = await loggedIn(context, wall.server.admin);
    await page.getByRole("link", { name: "Wall" }).click();
    await page.waitForURL(/\/wall$/);
    await hasText(tile(page, "mailer"), (text) => text.includes("paused"));
    expect(await page.locator(".tile h2 a").count()).toBe(WALL_APPS.length);
    expect(await sidewaysScroll(page)).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    await tile(page, "web").getByRole("link", { name: "web" }).click();
    await page.waitForURL(/\/apps\/web$/);
    await hasText(page.locator("#rules"), (text) => text.includes("year-end"));
  }, 120_000);

  test("the tiles follow the service without a reload: billing's deploy ends, search's starts and ends", async () => {
    await using context = await launchBrowser({ viewport: SIZES[1]! });
    const page = context.pages()[0] ?? (await context.newPage());
    await kiosk(page, wall.server.admin);
    await hasText(tile(page, "billing"), (text) => text.includes("deploying: run"));
    writeFileSync(wall.go, "");
    await hasText(tile(page, "billing"), (text) => text.includes("last ok"));
    await hasText(tile(page, "search"), (text) => text.includes("last ok"));
    expect(await tile(page, "billing").getAttribute("data-state")).toBe("idle");
    expect((await apps(wall.server.admin)).find((a) => a.name === "search")?.last?.outcome).toBe("ok");
  }, 120_000);
});
