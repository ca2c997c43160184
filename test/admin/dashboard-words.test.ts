/**
 * The dashboard's words are true (docs/admin.md "The dashboard"), in a real browser: a failed build reads "Failed at
 * run"; a switch back's phases are named apart, their labels at least 12 px at 390 px; a frozen card says "Frozen"
 * once; a read token sees no empty Actions column; a tag deploy shows its tag. No serious axe-core violation.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { ADMIN_TOKEN, bearer, startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, hasText, launchBrowser, loggedIn, seriousViolations, shown } from "../_support/browser.ts";
import { git, makeRepo, post, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import { makeReleasesSite } from "../_support/release-helpers.ts";
import { writeToken } from "../_support/token-fixtures.ts";
import { githubPush } from "../_support/webhook-fixtures.ts";

const browser = hasBrowser("the dashboard's words test");

let context: Awaited<ReturnType<typeof launchBrowser>> | undefined;
afterAll(async () => {
  await context?.close();
});

/** A page logged in on `admin` with `token`, at `width` px. */
async function pageAt(admin: string, width = 1300, token = ADMIN_TOKEN): Promise<Page> {
  context ??= await launchBrowser({ viewport: { width: 1300, height: 800 } });
  await context.clearCookies();
  const page = await loggedIn(context, admin, token);
  await page.setViewportSize({ width, height: 800 });
  return page;
}

/** The deploy's outcome panel and the names of its phases, once the page has said them. */
async function deployPage(page: Page, admin: string, id: string) {
  await page.goto(`${admin}/deploys/${id}`);
  const outcome = page.locator("#outcome");
  await waitFor(async () => (await outcome.getAttribute("data-outcome")) !== null, "the outcome panel");
  const phases = page.locator("#timeline [data-phase]");
  await waitFor(async () => (await phases.count()) > 0, "the timeline");
  return {
    text: (await outcome.textContent()) ?? "",
    phases: await phases.evaluateAll((rows) => rows.map((row) => row.getAttribute("data-phase"))),
  };
}

describe("the dashboard's words", () => {
  test.skipIf(!browser)(
    "with releases: a failed build reads Failed at run; a switch back's phases are named apart, readable at 390 px",
    async () => {
      const s = makeReleasesSite({ "public/index.html": "v1\n", healthy: "yes\n", "build.sh": "exit 0\n" });
      const script = s.env.SERVICE_RUN_SCRIPT!;
      await using server = await startAdmin(s.cwd, {
        ...s.env,
        SERVICE_RUN_SCRIPT: `${script} && sh build.sh`,
        SERVICE_ROLLBACK_ON_FAILURE: "true",
        SERVICE_HEALTH_CHECK: "test -f healthy",
        SERVICE_HEALTH_CHECK_TIMEOUT_MS: "400",
        SERVICE_HEALTH_CHECK_INTERVAL_MS: "100",
      });
      const deploy = async () => (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
      expect((await deploy()).ok).toBe(true);
      s.repo.push({ "build.sh": "exit 3\n" }, "Break the build");
      const broken = await deploy();
      expect(broken.ok).toBe(false);
      s.repo.push({ "build.sh": "exit 0\n" }, "Mend the build");
      git(join(s.repo.dir, "pusher"), "rm", "-q", "healthy");
      s.repo.push({}, "removes healthy");
      const switchedBack = await deploy();
      expect(switchedBack).toMatchObject({ ok: true, rolledBack: true, switchedBack: true });

      const page = await pageAt(server.admin);
      const failed = await deployPage(page, server.admin, broken.id);
      expect(failed.text).toBe("Failed at run: the run script exited with 3");

      await page.setViewportSize({ width: 390, height: 800 });
      const back = await deployPage(page, server.admin, switchedBack.id);
      expect(back.phases).toEqual([
        "queue",
        "pull",
        "release",
        "run",
        "switch",
        "health",
        "switch back",
        "health after switch back",
      ]);
      expect(new Set(back.phases).size).toBe(back.phases.length);
      // Each label's text as drawn on the screen: at least 12 px.
      const sizes = await page.locator("#timeline [data-phase] .label").evaluateAll((labels) =>
        labels.map((label) => {
          const scale = label instanceof SVGGraphicsElement ? (label.getScreenCTM()?.a ?? 1) : 1;
          return parseFloat(getComputedStyle(label).fontSize) * scale;
        }),
      );
      expect(sizes).toHaveLength(back.phases.length);
      for (const size of sizes) expect(size).toBeGreaterThanOrEqual(12);
      expect(await seriousViolations(page)).toEqual([]);
    },
    120_000,
  );

  test.skipIf(!browser)("a frozen app's card says Frozen once, with its reason and end", async () => {
    const repo = makeRepo();
    writeFileSync(
      join(repo.clone, "service.yaml"),
      "runScript: 'true'\nfreeze:\n  - { from: '2020-01-01', to: '2099-12-31', reason: year-end audit }\n",
    );
    await using server = await startAdmin(repo.clone);
    const page = await pageAt(server.admin);
    const card = page.getByRole("region", { name: "default" });
    await hasText(card, (text) => text.includes("year-end audit"));
    const text = (await card.textContent()) ?? "";
    expect(text.match(/frozen/gi)).toEqual(["Frozen"]);
    expect(text).toContain("year-end audit until 2100-01-01");
    expect(await seriousViolations(page)).toEqual([]);
  });

  test.skipIf(!browser)("a read token's history has no Actions column; an admin's has it", async () => {
    const repo = makeRepo();
    const file = join(tempDir("service-token-files-"), "grafana");
    writeToken(file, "grafana-token-0123456789abcdef");
    writeFileSync(
      join(repo.clone, "service.yaml"),
      `runScript: 'true'\ntokens:\n  - { name: grafana, role: read, file: ${file} }\n`,
    );
    await using server = await startAdmin(repo.clone);
    expect((await (await post(`${server.url}/?format=json`, { secret: SECRET })).json()).ok).toBe(true);

    const admin = await pageAt(server.admin);
    await admin.goto(`${server.admin}/deploys`);
    await shown(admin.getByRole("columnheader", { name: "Actions" }));

    const reader = await pageAt(server.admin, 1300, "grafana-token-0123456789abcdef");
    await reader.goto(`${server.admin}/deploys`);
    await shown(reader.locator("tbody tr td").first());
    await waitFor(
      async () => (await reader.locator("body").getAttribute("data-role")) === "read",
      "the role to be known",
    );
    expect(await reader.getByRole("columnheader", { name: "Actions" }).count()).toBe(0);
    expect(await reader.locator('td[data-label="Actions"]:visible').count()).toBe(0);
    expect(await seriousViolations(reader)).toEqual([]);
  });

  test.skipIf(!browser)("a tag deploy shows its tag: in the history, on its page and on the app's card", async () => {
    const repo = makeRepo();
    const pusher = join(repo.dir, "pusher");
    repo.push({ "version.txt": "1.0.0\n" }, "release 1.0.0");
    git(pusher, "tag", "-a", "v1.0.0", "-m", "v1.0.0");
    git(pusher, "push", "--quiet", "origin", "refs/tags/v1.0.0");
    await using server = await startAdmin(repo.clone, { SERVICE_TAGS: "v*", SERVICE_RUN_SCRIPT: "true" });
    const body = JSON.stringify(githubPush("refs/tags/v1.0.0"));
    const response = await post(`${server.url}/?format=json`, {
      headers: { "x-service-secret": SECRET, "x-github-event": "push", "content-type": "application/json" },
      body,
    });
    const deployed = await response.json();
    expect(deployed.ok).toBe(true);
    const record = await (await fetch(`${server.admin}/api/deploys/${deployed.id}`, { headers: bearer() })).json();
    expect(record.result.target.tag).toBe("v1.0.0");

    const page = await pageAt(server.admin);
    await hasText(page.getByRole("region", { name: "default" }), (text) => text.includes("tag v1.0.0"));
    await page.goto(`${server.admin}/deploys`);
    await hasText(page.locator("tbody tr").first().locator("td.commit"), (text) => text.includes("tag v1.0.0"));
    await page.goto(`${server.admin}/deploys/${deployed.id}`);
    await shown(page.locator("#outcome"));
    expect(await page.locator('dt:text-is("Tag") + dd').textContent()).toBe("v1.0.0");
    expect(await seriousViolations(page)).toEqual([]);
  });
});
