/**
 * docs/gates.md, in a real browser: while a deploy waits at its gate the app's card says "waiting for checks"; the
 * deploy's page says how the gate ended, each required check with its state and its link.
 */
import { describe, expect, test } from "bun:test";
import { startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, hasText, launchBrowser, loggedIn, shown } from "../_support/browser.ts";
import { StreamReader } from "../_support/gate.ts";
import { gatedService } from "../_support/github-checks.ts";
import { lastLine, post, SECRET, waitFor } from "../_support/helpers.ts";

const browser = hasBrowser("the dashboard's gate test");

describe("the gate on the dashboard", () => {
  test.skipIf(!browser)(
    "the card says waiting for checks while a deploy waits; the deploy's page names the check that shut the gate",
    async () => {
      const s = gatedService("{ checks: [ci/build] }");
      const sha = s.repo.push({ "a.txt": "1" });
      await using server = await startAdmin(s.cwd, s.env);
      const out = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
      await waitFor(() => out.text.includes("[gate] waiting for ci/build (missing)"), "the wait");

      await using context = await launchBrowser({ viewport: { width: 1300, height: 800 } });
      const page = await loggedIn(context, server.admin);
      const card = page.getByRole("region", { name: "default" });
      await hasText(card, (text) => text.includes("waiting for checks"));

      s.forge.status(sha, "ci/build", "failure");
      await out.done;
      expect(lastLine(out.text)).toBe("[done] ok=false exitCode=null");
      await page.goto(`${server.admin}/deploys/${out.id()}`);
      const dl = page.locator("#content dl");
      await shown(dl);
      await hasText(dl, (text) => /Gateshut: ci\/build failure .* · ci\/build failure/.test(text));
      const link = dl.getByRole("link", { name: "↗" });
      expect(await link.getAttribute("href")).toStartWith("https://ci.example/");
    },
  );
});
