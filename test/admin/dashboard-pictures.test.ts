/**
 * docs/admin.md "An app's page" and "A deploy", in a real browser: the app's last deploys as bars (one per record,
 * coloured by outcome, each a link to its deploy, the slow one marked) beside its rates and medians; a deploy's
 * phases on a time axis, growing while it runs, its log followed live; commits linked to the forge.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, hasText, launchBrowser, loggedIn, seriousViolations } from "../_support/browser.ts";
import { git, makeRepo, tempDir, waitFor } from "../_support/helpers.ts";
import { hasFaketime } from "../_support/history-fixtures.ts";
import { statsHistory } from "../_support/stats-history.ts";

const browser = hasBrowser("the dashboard's pictures test");

interface Entry {
  id: string;
  durationMs: number;
}

describe("the dashboard's pictures", () => {
  test.skipIf(!browser || !hasFaketime)(
    "the app page's bars match the records (count, outcome colour, link) and its rates and medians are the records'; no serious axe violation",
    async () => {
      const { cwd } = await statsHistory();
      await using server = await startAdmin(cwd, { SERVICE_SECRET: undefined });
      const entries = (await (await fetch(`${server.admin}/api/deploys`, { headers: bearer() })).json()) as Entry[];
      const stats = await (await fetch(`${server.admin}/api/apps/web/stats`, { headers: bearer() })).json();

      await using context = await launchBrowser({ viewport: { width: 1300, height: 800 } });
      const page = await loggedIn(context, server.admin);
      // From the apps page, by the app's name.
      await page.getByRole("link", { name: "web", exact: true }).click();
      await page.waitForURL(/\/apps\/web$/);
      const bars = page.locator("svg.bars rect");
      await waitFor(async () => (await bars.count()) === entries.length, "a bar per deploy");
      // Oldest on the left: the records reversed.
      const outcomes = await bars.evaluateAll((rects) => rects.map((rect) => rect.getAttribute("data-outcome")));
      expect(outcomes).toEqual(["ok", "failed", "ok", "ok"]);
      expect(await bars.nth(1).getAttribute("class")).toBe("bar failed");
      const newest = page.locator("svg.bars a").last();
      expect(await newest.getAttribute("href")).toBe(`../deploys/${entries[0]!.id}`);
      // The slow one (4 s) stands out, and its title says why.
      expect(await bars.last().getAttribute("class")).toBe("bar ok slow");
      expect(await bars.last().locator("title").textContent()).toContain("slow: over twice the median");
      const week = page.locator('[data-days="7"]');
      await hasText(week, (text) => text.startsWith("67 % ok (2 of 3)"));
      const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
      expect(await week.locator(".median").textContent()).toBe(seconds(stats.windows[0].medianMs));
      const month = page.locator('[data-days="30"]');
      expect(await month.locator(".rate").textContent()).toBe("75 % ok (3 of 4)");
      expect(await month.locator(".median").textContent()).toBe(seconds(stats.windows[1].medianMs));
      expect(await seriousViolations(page)).toEqual([]);
      // A bar opens its deploy.
      await newest.click();
      await page.waitForURL(new RegExp(`/deploys/${entries[0]!.id}$`));
    },
    120_000,
  );

  test.skipIf(!browser)(
    "a running deploy's page follows its log and its phase timeline grows; once done the timeline is the record's phases",
    async () => {
      const repo = makeRepo();
      const dir = tempDir("service-go-");
      const script = `echo first line; while [ ! -e ${join(dir, "go")} ]; do sleep 0.05; done; echo printed after the page opened`;
      await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: script });
      const started = await fetch(`${server.admin}/api/apps/default/deploy`, { method: "POST", headers: bearer() });
      const { id } = (await started.json()) as { id: string };
      try {
        await using context = await launchBrowser({ viewport: { width: 1300, height: 800 } });
        const page = await loggedIn(context, server.admin);
        await page.goto(`${server.admin}/deploys/${id}`);
        const log = page.locator("#log");
        await hasText(log, (text) => text.includes("first line"));
        // While it runs: the phases that ended (the queue wait, the pull), the run not yet.
        const phases = page.locator("#timeline [data-phase]");
        await waitFor(async () => (await phases.count()) === 2, "the ended phases on the timeline");
        expect(await phases.evaluateAll((groups) => groups.map((g) => g.getAttribute("data-phase")))).toEqual([
          "queue",
          "pull",
        ]);
        writeFileSync(join(dir, "go"), "");
        await hasText(log, (text) => text.includes("printed after the page opened"));
        await hasText(page.locator("#outcome"), (text) => text === "Succeeded (exit code 0)");
        const record = await (await fetch(`${server.admin}/api/deploys/${id}`, { headers: bearer() })).json();
        const names = record.result.phases.map((phase: { name: string }) => phase.name);
        expect(names).toEqual(["queue", "pull", "run"]);
        await waitFor(async () => (await phases.count()) === names.length, "every phase on the timeline");
        expect(await phases.evaluateAll((groups) => groups.map((g) => g.getAttribute("data-phase")))).toEqual(names);
        // Its words for screen readers: each phase with its duration.
        const label = (await page.locator("#timeline .timeline").getAttribute("aria-label")) ?? "";
        expect(label).toMatch(/^Phases: queue \d+\.\d s, pull \d+\.\d s, run \d+\.\d s$/);
        expect(await seriousViolations(page)).toEqual([]);
      } finally {
        writeFileSync(join(dir, "go"), "");
      }
    },
  );

  test.skipIf(!browser)(
    "a commit on a deploy's page and the apps page links to its page on the forge, and the commits to their comparison, without credentials",
    async () => {
      const repo = makeRepo({ "build.sh": "exit 0\n" });
      await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "sh build.sh" });
      const deploy = async () => {
        const res = await fetch(`${server.admin}/api/apps/default/deploy`, { method: "POST", headers: bearer() });
        const { id } = (await res.json()) as { id: string };
        return waitFor(async () => {
          const record = await (await fetch(`${server.admin}/api/deploys/${id}`, { headers: bearer() })).json();
          return record.status === "done" ? record : undefined;
        }, "the deploy to end");
      };
      await deploy();
      const after = repo.push({ "build.sh": "echo v2\n" }, "Second version");
      const record = await deploy();
      const before = record.result.previousCommit.sha as string;
      // The origin on GitHub, with a token in its URL (after the pulls: the links are read from it each time).
      git(repo.clone, "remote", "set-url", "origin", "https://x-access-token:ghp_notshown@github.com/acme/web.git");

      await using context = await launchBrowser({ viewport: { width: 1300, height: 800 } });
      const page = await loggedIn(context, server.admin);
      await page.goto(`${server.admin}/deploys/${record.id}`);
      const tried = page.locator("dd a.commit-link").first();
      await waitFor(async () => (await tried.count()) === 1, "the commit's link");
      expect(await tried.getAttribute("href")).toBe(`https://github.com/acme/web/commit/${after}`);
      expect(await tried.textContent()).toBe(after.slice(0, 8));
      const compare = page.locator("dd a.compare-link");
      expect(await compare.getAttribute("href")).toBe(`https://github.com/acme/web/compare/${before}...${after}`);
      expect(await page.content()).not.toContain("ghp_notshown");
      // The apps page links the live commit too.
      await page.goto(`${server.admin}/`);
      const live = page.locator("dd a.commit-link").first();
      await waitFor(async () => (await live.count()) === 1, "the live commit's link");
      expect(await live.getAttribute("href")).toBe(`https://github.com/acme/web/commit/${after}`);
      expect(await page.content()).not.toContain("ghp_notshown");
    },
  );
});
