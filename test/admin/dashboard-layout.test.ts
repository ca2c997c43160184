/**
 * The dashboard's layout and accessibility (docs/admin.md "The dashboard"), in a real browser, with a busy service:
 * 20 apps keeping 5 releases each, 100-character commit subjects and long actors. At a laptop's and a desktop's
 * width nothing scrolls sideways and every important column is in view; at a phone's width the tables are
 * labelled stacked rows. Every page has no serious or critical axe-core violation.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Locator } from "playwright-core";
import { ADMIN_TOKEN, startAdmin, type AdminServer } from "../_support/admin-helpers.ts";
import { hasBrowser, launchBrowser, seriousViolations, shown, sidewaysScroll } from "../_support/browser.ts";
import { makeRepo, pushAs, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import { githubPush, postAs, writeServiceYaml } from "../_support/webhook-fixtures.ts";

const browser = hasBrowser("the dashboard's layout test");

const APPS = 20;
const KEEP = 5;
const SUBJECT = `Rework the ${"checkout and payment ".repeat(4)}flow so that it keeps going`.slice(0, 100);
const ACTOR = `a-very-long-pusher-login-from-a-forge-${"x".repeat(40)}-of-the-organisation`;
const SIZES = [
  { width: 1280, height: 800 },
  { width: 1600, height: 900 },
  { width: 390, height: 800 },
];
const name = (i: number) => `app-${String(i).padStart(2, "0")}`;

/** 20 apps with releases, each deployed KEEP times by a pusher with a long name, the newest a long subject. */
async function busyService(): Promise<{ server: AdminServer; deployId: string }> {
  const cwd = tempDir("service-layout-");
  const repos = Array.from({ length: APPS }, () => makeRepo());
  const site = (i: number) => join(cwd, "sites", name(i));
  for (let i = 0; i < APPS; i++) mkdirSync(site(i), { recursive: true });
  writeServiceYaml(cwd, {
    maxConcurrentDeploys: 4,
    apps: repos.map((repo, i) => ({
      name: name(i),
      host: "apps.example.com",
      path: `/${name(i)}`,
      repoPath: repo.clone,
      runScript: "true",
      secret: SECRET,
      releases: { path: site(i), keep: KEEP },
    })),
  });
  const server = await startAdmin(cwd, { SERVICE_SECRET: undefined });
  const delivery = githubPush() as { sender: { login: string } };
  delivery.sender.login = ACTOR;
  const deploy = async (i: number) => {
    const res = await postAs(server.url, "apps.example.com", `/${name(i)}?format=json`, {
      secret: SECRET,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(delivery),
    });
    const result = await res.json();
    expect({ app: name(i), result }).toMatchObject({ app: name(i), result: { ok: true } });
    return result.id as string;
  };
  const ids = await Promise.all(
    repos.map(async (repo, i) => {
      for (let n = 1; n < KEEP; n++) await deploy(i);
      pushAs(repo, "Someone With A Long Name <someone@example.com>", SUBJECT);
      return deploy(i);
    }),
  );
  return { server, deployId: ids[0]! };
}

/**
 * Fails naming `what` unless `locator` is shown and lies within the viewport's width and inside every box that
 * clips it (a table's scrolling wrapper hides what sticks out until scrolled).
 */
async function inView(locator: Locator, what: string): Promise<void> {
  await shown(locator);
  const hidden = await locator.evaluate((node) => {
    const box = node.getBoundingClientRect();
    if (box.left < 0 || box.right > window.innerWidth) return `outside the viewport (${box.left}–${box.right} px)`;
    for (let up = node.parentElement; up; up = up.parentElement) {
      if (getComputedStyle(up).overflowX === "visible") continue;
      const clip = up.getBoundingClientRect();
      if (box.left < clip.left - 1 || box.right > clip.right + 1)
        return `clipped by ${up.tagName.toLowerCase()}.${up.className} (${box.left}–${box.right} in ${clip.left}–${clip.right} px)`;
    }
    return "";
  });
  expect({ what, hidden }).toEqual({ what, hidden: "" });
}

/** The label a stacked cell shows before its value (`td::before`), or "none". */
const cellLabel = (cell: Locator) => cell.evaluate((node) => getComputedStyle(node, "::before").content);

let service: { server: AdminServer; deployId: string } | undefined;

describe.skipIf(!browser)("the dashboard with 20 apps, long subjects and long actors", () => {
  beforeAll(async () => {
    service = await busyService();
  }, 120_000);
  afterAll(async () => {
    await service?.server.stop();
  });

  test("at 1280×800 and 1600×900 no page scrolls sideways and the commit, live badge, switch back, started, duration, outcome and actions are in view; at 390 px the tables are labelled stacked rows that fit", async () => {
    const { server, deployId } = service!;
    await using context = await launchBrowser({ viewport: SIZES[0]! });
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(20_000);
    await page.goto(`${server.admin}/`);
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await page.getByRole("button", { name: "Log in" }).click();
    for (const size of SIZES) {
      await page.setViewportSize(size);
      const at = `${size.width} px`;

      await page.goto(`${server.admin}/`);
      const last = page.getByRole("region", { name: name(APPS - 1) });
      await waitFor(async () => (await last.locator("tbody tr").count()) === KEEP, `${KEEP} releases (${at})`);
      const rows = page.getByRole("region", { name: name(0) }).locator("tbody tr");
      await inView(rows.first().locator("td").nth(1), `the releases' Commit at ${at}`);
      await inView(rows.first().getByText("live", { exact: true }), `the live badge at ${at}`);
      await inView(rows.last().getByRole("button", { name: /^Switch back/ }), `Switch back at ${at}`);
      expect({ at, sideways: await sidewaysScroll(page) }).toEqual({ at, sideways: [] });
      if (size.width < 600) expect(await cellLabel(rows.first().locator("td").nth(1))).toBe('"Commit"');

      await page.goto(`${server.admin}/deploys`);
      const row = page.locator("tbody tr").first();
      await shown(row.getByRole("button", { name: /^Deploy again/ }));
      for (const column of ["Commit", "Outcome", "Started", "Duration", "Actions"])
        await inView(row.locator(`td[data-label="${column}"]`), `the history's ${column} at ${at}`);
      expect(await row.locator("td.actor").getAttribute("title")).toBe(ACTOR);
      expect({ at, sideways: await sidewaysScroll(page) }).toEqual({ at, sideways: [] });
      if (size.width < 600) expect(await cellLabel(row.locator('td[data-label="Started"]'))).toBe('"Started"');

      await page.goto(`${server.admin}/deploys/${deployId}`);
      await shown(page.locator("#outcome"));
      for (const field of ["Outcome", "Started", "Duration", "Tried commit"])
        await inView(page.locator(`dt:text-is("${field}") + dd`), `the deploy's ${field} at ${at}`);
      expect({ at, sideways: await sidewaysScroll(page) }).toEqual({ at, sideways: [] });
    }
  }, 120_000);

  test("the login, apps, history and deploy pages have no serious or critical axe-core violation; every action is a focusable control with a visible focus outline", async () => {
    const { server, deployId } = service!;
    await using context = await launchBrowser({ viewport: SIZES[0]! });
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(20_000);
    await page.goto(`${server.admin}/`);
    await shown(page.getByLabel("Admin token"));
    expect({ page: "login", found: await seriousViolations(page) }).toEqual({ page: "login", found: [] });
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await page.getByRole("button", { name: "Log in" }).click();
    const pages: [string, string, Locator][] = [
      ["apps", "/", page.getByRole("button", { name: /^Switch back/ }).first()],
      ["history", "/deploys", page.getByRole("button", { name: /^Deploy again/ }).first()],
      ["deploy", `/deploys/${deployId}`, page.getByRole("button", { name: "Deploy again" })],
    ];
    for (const size of [SIZES[0]!, SIZES[2]!]) {
      await page.setViewportSize(size);
      for (const [kind, path, action] of pages) {
        await page.goto(`${server.admin}${path}`);
        await shown(action);
        const at = `${kind} at ${size.width} px`;
        expect({ at, found: await seriousViolations(page) }).toEqual({ at, found: [] });
        if (size.width < 600) continue;
        // Reached by the keyboard: Tab moves the focus to it, and the focus is drawn.
        await waitFor(async () => {
          await page.keyboard.press("Tab");
          return action.evaluate((node) => node === document.activeElement);
        }, `the keyboard to reach ${at}'s action`);
        const outline = await action.evaluate((node) => getComputedStyle(node).outlineStyle);
        expect({ at, outline }).toEqual({ at, outline: "solid" });
      }
    }
  }, 120_000);
});
