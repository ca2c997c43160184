/**
 * Who deployed what, in the dashboard, in a real browser (Debian's headless Chromium via playwright-core; skipped
 * where there is none): the history shows who started each deploy and the commit's subject and author as text,
 * whatever they hold; "Deploy again" on a row and the app's ref field deploy through the API as the logged-in
 * user; a deploy while paused asks for confirmation, then is forced (docs/admin.md "The dashboard").
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Locator } from "playwright-core";
import { makeRepo, post, pushAs, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { githubPush } from "../_support/webhook-fixtures.ts";
import { confirmWith } from "../_support/browser.ts";

const CHROMIUM = process.env.SERVICE_TEST_CHROMIUM ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
];
const browser = existsSync(CHROMIUM);

const HOSTILE_ACTOR = `<script>window.__injected = 1</script>\u0007\u001b[2J<img src=x onerror="window.__injected = 2">`;
const HOSTILE_SUBJECT = `<img src=x onerror="window.__injected = 3"> fix the header`;
/** git refuses < and > in a name: an entity shows whether the page decodes it as markup. */
const HOSTILE_AUTHOR = "Mallory &lt;b&gt; & Co";

const shown = (locator: Locator) => locator.waitFor({ state: "visible" });
const hasText = (locator: Locator, check: (text: string) => boolean) =>
  waitFor(async () => check((await locator.textContent()) ?? ""), `${locator} to have the text`);

describe("the dashboard's history in a browser", () => {
  test.skipIf(!browser)(
    "actors and commit subjects with markup and control characters are text; deploy again and a ref from the dashboard run as the logged-in user; a deploy while paused is confirmed, then forced",
    async () => {
      const { chromium } = await import("playwright-core");
      const repo = makeRepo();
      const initial = repo.head();
      const pushed = pushAs(repo, `${HOSTILE_AUTHOR} <m@example.com>`, HOSTILE_SUBJECT);
      const { server, admin } = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "true" });
      await using _server = server;
      const delivery = githubPush() as { sender: { login: string } };
      delivery.sender.login = HOSTILE_ACTOR;
      const hooked = await post(`${server.url}/?format=json`, {
        secret: SECRET,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(delivery),
      });
      const first = await hooked.json();
      expect(first.ok).toBe(true);
      expect(repo.head()).toBe(pushed);

      const context = await chromium.launchPersistentContext(tempDir("service-chromium-"), {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_ARGS,
        viewport: { width: 1300, height: 800 },
      });
      try {
        const page = context.pages()[0] ?? (await context.newPage());
        page.setDefaultTimeout(20_000);
        const injected = () => page.evaluate(() => (window as unknown as { __injected?: number }).__injected);
        await page.goto(`${admin}/`);
        await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
        await page.getByLabel("Your name").fill("alice");
        await page.getByRole("button", { name: "Log in" }).click();
        const card = page.getByRole("region", { name: "default" });
        await shown(card.getByText("idle"));

        // The history: the pusher and the commit, as the text they are.
        await page.getByRole("link", { name: "Deploy history" }).click();
        const row = page.locator("tbody tr").first();
        const cleaned = `<script>window.__injected = 1</script>[2J<img src=x onerror="window.__injected = 2">`;
        await hasText(row.locator("td.actor"), (text) => text === cleaned);
        await hasText(
          row.locator("td.commit"),
          (text) => text === `${pushed.slice(0, 8)} ${HOSTILE_SUBJECT} (${HOSTILE_AUTHOR})`,
        );
        expect(await page.locator("tbody script, tbody img, tbody b").count()).toBe(0);
        expect(await injected()).toBeUndefined();

        // The deploy's page names them too.
        await row.locator("td a").first().click();
        await hasText(page.locator("#content dl"), (text) => text.includes(`By${cleaned}`));
        await hasText(page.locator("#content dl"), (text) => text.includes(HOSTILE_SUBJECT));
        expect(await page.locator("#content dl script, #content dl img, #content dl b").count()).toBe(0);

        // A ref from the app's card: the first commit, deployed by alice.
        await page.getByRole("link", { name: "Apps" }).click();
        await card.getByLabel("Ref to deploy for default").fill(initial.slice(0, 10));
        await confirmWith(page, card.getByRole("button", { name: "Deploy now" }));
        await waitFor(() => repo.head() === initial, "the ref to be deployed");

        // Deploy again the webhook's deploy, from its row: its commit again, by alice.
        await page.getByRole("link", { name: "Deploy history" }).click();
        await confirmWith(page, page.getByRole("button", { name: `Deploy again ${first.id.slice(0, 8)}` }));
        await waitFor(() => repo.head() === pushed, "the retry to deploy the pushed commit");
        await hasText(page.locator("tbody tr").first().locator("td.actor"), (text) => text === "admin:alice@127.0.0.1");

        // Paused: the dashboard asks, and a confirmed deploy is forced.
        const paused = await fetch(`${admin}/api/apps/default/pause`, {
          method: "POST",
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          body: JSON.stringify({ reason: "release freeze" }),
        });
        expect(paused.status).toBe(200);
        const asked: string[] = [];
        page.on("dialog", (dialog) => {
          asked.push(dialog.message());
          void dialog.accept();
        });
        await page.getByRole("link", { name: "Apps" }).click();
        await shown(card.getByText("paused: release freeze"));
        await shown(card.getByText("by admin@127.0.0.1"));
        await confirmWith(page, card.getByRole("button", { name: "Deploy now" }));
        await waitFor(() => asked.length === 1, "the confirmation");
        expect(asked[0]).toStartWith("Deploys are paused: release freeze (by admin@127.0.0.1, since ");
        await page.getByRole("link", { name: "Deploy history" }).click();
        await hasText(page.locator("tbody tr").first(), (text) => text.includes("(forced)"));
        expect(await injected()).toBeUndefined();
      } finally {
        await context.close();
      }
    },
  );
});
