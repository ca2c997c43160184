/** The dashboard with releases, in a real browser (docs/releases.md "Status and the dashboard"). */
import { describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { confirmWith, hasBrowser, hasText, launchBrowser, shown } from "../_support/browser.ts";
import { waitFor } from "../_support/helpers.ts";
import { counted, currentRelease, deployStreamed, makeReleasesSite } from "../_support/release-helpers.ts";

const browser = hasBrowser("the releases dashboard test");

describe('releases on the dashboard (docs/releases.md "Status and the dashboard")', () => {
  test.skipIf(!browser)(
    "the app's card shows which release is live and offers a switch back on each kept one: a click runs the rollback, with no build",
    async () => {
      const s = makeReleasesSite();
      await using server = await startAdmin(s.cwd, s.env);
      const { admin } = server;
      const one = (await deployStreamed(server.url, s.cwd)).result.release;
      s.repo.push({ "public/index.html": "v2\n" }, "v2");
      const two = (await deployStreamed(server.url, s.cwd)).result.release;
      await using context = await launchBrowser();
      const page = context.pages()[0] ?? (await context.newPage());
      page.setDefaultTimeout(20_000);
      await page.goto(`${admin}/`);
      await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
      await page.getByRole("button", { name: "Log in" }).click();
      const card = page.getByRole("region", { name: "default" });
      await hasText(card.locator("dl"), (text) => text.includes(`Live release${two.id}`));
      const liveRow = card.getByRole("row", { name: new RegExp(two.id) });
      await shown(liveRow.getByText("live", { exact: true }));
      expect(await liveRow.getByRole("button").count()).toBe(0);

      await confirmWith(page, card.getByRole("button", { name: `Switch back to release ${one.id}` }));
      await waitFor(() => currentRelease(s.site) === one.id, "the switch back");
      await shown(card.getByRole("row", { name: new RegExp(one.id) }).getByText("live", { exact: true }));
      await shown(card.getByRole("button", { name: `Switch back to release ${two.id}` }));
      expect(counted(s.builds)).toEqual([one.id, two.id]);
    },
  );
});
