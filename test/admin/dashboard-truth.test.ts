/**
 * The dashboard says what is live (docs/deploy-control.md "What is live"), in a real browser: the app's card names
 * the live commit and the clone's HEAD apart; a rolled-back deploy's page reads amber, "Rolled back: <commit> stays
 * live" with the reason, never a green "Succeeded"; the history names the commit a deploy tried beside the live one.
 */
import { describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, hasText, launchBrowser, shown } from "../_support/browser.ts";
import { git, makeRepo, post, SECRET } from "../_support/helpers.ts";

const browser = hasBrowser("the dashboard's truth test");

describe("the dashboard says what is live", () => {
  test.skipIf(!browser)(
    "a rolled-back deploy's page is amber and names the commit that stays live; the card names the live commit and the clone's HEAD apart",
    async () => {
      const repo = makeRepo({ "build.sh": "exit 0\n" });
      const { server, admin } = await startAdmin(repo.clone, {
        SERVICE_RUN_SCRIPT: "sh build.sh",
        SERVICE_ROLLBACK_ON_FAILURE: "true",
      });
      await using _server = server;
      const good = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
      expect(good.ok).toBe(true);
      const live = good.commit.sha as string;
      const broken = repo.push({ "build.sh": "exit 3\n" }, "Break the build");
      const rolled = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
      expect(rolled.rolledBack).toBe(true);
      expect(rolled.commit.sha).toBe(live);
      // The clone moved by hand: what is checked out is not what is live.
      git(repo.clone, "reset", "--quiet", "--hard", broken);

      await using context = await launchBrowser({ viewport: { width: 1300, height: 800 } });
      const page = context.pages()[0] ?? (await context.newPage());
      page.setDefaultTimeout(20_000);
      await page.goto(`${admin}/`);
      await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
      await page.getByRole("button", { name: "Log in" }).click();
      const card = page.getByRole("region", { name: "default" });
      await hasText(card, (text) => text.includes(`Live commit${live.slice(0, 8)}`));
      await hasText(card, (text) => text.includes(`Checked out${broken.slice(0, 8)} in the clone (not live)`));

      // The rolled-back deploy's page: amber, the commit that stays live and why.
      await page.goto(`${admin}/deploys/${rolled.id}`);
      const outcome = page.locator("#outcome");
      await shown(outcome);
      await hasText(outcome, (text) => text.startsWith(`Rolled back: ${live.slice(0, 8)}`));
      const text = (await outcome.textContent()) ?? "";
      expect(text).toContain("stays live");
      expect(text).toEndWith("stays live: the run script exited with 3");
      expect(text).not.toContain("Succeeded");
      expect(await outcome.getAttribute("class")).toBe("done rolled-back");
      const dl = page.locator("#content dl");
      await hasText(dl, (t) => t.includes(`Tried commit${broken.slice(0, 8)} Break the build`));
      await hasText(dl, (t) => t.includes(`Commits${live.slice(0, 8)} → ${broken.slice(0, 8)}`));

      // The history: the commit tried, and the live one beside it.
      await page.getByRole("link", { name: "Deploy history" }).click();
      const cell = page.locator("tbody tr td.commit").first();
      await hasText(cell, (t) => t.startsWith(`${broken.slice(0, 8)} Break the build`));
      expect(await cell.textContent()).toContain(`live: ${live.slice(0, 8)}`);
    },
  );
});
