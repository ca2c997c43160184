/**
 * The dashboard shows text from outside by the CLI's rule (src/system/shown.ts), in a real browser: a ref and a
 * pause reason without the marks that would reorder the line or hide characters.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, hasText, launchBrowser, loggedIn } from "../_support/browser.ts";
import { git, makeRepo, runCli } from "../_support/helpers.ts";
import { deployIdOf } from "../_support/ops-helpers.ts";

const browser = hasBrowser("the dashboard's shown-text test");

/** A right-to-left override, a soft hyphen, a combining grapheme joiner, a tag character and a C1 control (CSI). */
const MARKS = /[\u202E\u00AD\u{E0041}\u009B]|\u034F/u;
const HOSTILE = "fix\u202Eevil\u00ADx\u034Fy\u{E0041}z\u009Bw";
const SHOWN = "fixevilxyzw";

describe("text from outside on the dashboard", () => {
  test.skipIf(!browser)(
    "a ref and a pause reason with a right-to-left override, a soft hyphen, U+034F, a tag character and a C1 control are shown without them",
    async () => {
      const repo = makeRepo();
      const pusher = join(repo.dir, "pusher");
      git(pusher, "checkout", "--quiet", "-b", HOSTILE);
      git(pusher, "commit", "--quiet", "--allow-empty", "-m", "on the branch");
      git(pusher, "push", "--quiet", "origin", HOSTILE);
      const env = { SERVICE_RUN_SCRIPT: "true" };
      const deployed = await runCli(["deploy", "--ref", HOSTILE], { cwd: repo.clone, env });
      expect(deployed.code).toBe(0);
      expect((await runCli(["pause", "--reason", `freeze ${HOSTILE}`], { cwd: repo.clone, env })).code).toBe(0);
      await using server = await startAdmin(repo.clone, env);
      await using context = await launchBrowser();
      const page = await loggedIn(context, server.admin);
      const card = page.getByRole("region", { name: "default" });
      await hasText(card.locator("dl"), (text) => text.includes(`paused: freeze ${SHOWN}`));
      expect(await card.locator("dl").textContent()).not.toMatch(MARKS);

      await page.goto(`${server.admin}/deploys/${deployIdOf(deployed.stdout)}`);
      const info = page.locator("dl");
      await hasText(info, (text) => text.includes(`Ref${SHOWN}`));
      expect(await info.textContent()).not.toMatch(MARKS);
    },
  );
});
