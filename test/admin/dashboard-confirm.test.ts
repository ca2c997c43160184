/**
 * The dashboard asks before what changes what is live or stops a deploy (docs/admin.md "The dashboard"), in a
 * real browser: the question names the app, the commits and the deploy; going back (or Escape) sends nothing.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page, Request } from "playwright-core";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import {
  confirmWith,
  hasBrowser,
  hasText,
  launchBrowser,
  loggedIn,
  seriousViolations,
  shown,
} from "../_support/browser.ts";
import { defer, makeRepo, post, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import { currentRelease, deployStreamed, makeReleasesSite } from "../_support/release-helpers.ts";

const browser = hasBrowser("the dashboard's confirmation test");

/** The POSTs the page sends from now on (the dashboard's actions). */
function postsOf(page: Page): string[] {
  const posts: string[] = [];
  page.on("request", (request: Request) => {
    if (request.method() === "POST") posts.push(new URL(request.url()).pathname);
  });
  return posts;
}

/** The deploys in the history, newest first (through the API). */
async function history(admin: string): Promise<{ id: string; status: string }[]> {
  return (await fetch(`${admin}/api/deploys`, { headers: bearer() })).json();
}

describe.skipIf(!browser)("confirmations on the dashboard", () => {
  test("deploy now, cancel and resume ask first, naming the app, the branch, the live commit and the deploy; going back or Escape sends nothing", async () => {
    const repo = makeRepo();
    const live = repo.head();
    const gate = join(tempDir("service-confirm-"), "open");
    await using server = await startAdmin(repo.clone, {
      SERVICE_BRANCH: "main",
      SERVICE_RUN_SCRIPT: `sh -c 'while [ ! -f ${gate} ]; do sleep 0.05; done'`,
    });
    await using _open = defer(() => writeFileSync(gate, ""));
    await using context = await launchBrowser({ viewport: { width: 1280, height: 800 } });
    const page = await loggedIn(context, server.admin);
    const posts = postsOf(page);
    const card = page.getByRole("region", { name: "default" });
    await hasText(card.locator("dl"), (text) => text.includes("idle"));
    const before = (await history(server.admin)).length;

    const deploy = card.getByRole("button", { name: "Deploy now" });
    const asked = `Deploy default (pull main)? Live now: ${live.slice(0, 8)} 'initial'.`;
    expect(await confirmWith(page, deploy, "no")).toBe(asked);
    expect(await confirmWith(page, deploy, "escape")).toBe(asked);
    await card.getByLabel("Ref to deploy for default").fill("v9");
    expect(await confirmWith(page, deploy, "no")).toBe(
      `Deploy default at v9? Live now: ${live.slice(0, 8)} 'initial'.`,
    );
    expect({ posts, deploys: (await history(server.admin)).length }).toEqual({ posts: [], deploys: before });

    await card.getByLabel("Ref to deploy for default").fill("");
    expect(await confirmWith(page, deploy)).toBe(asked);
    const running = await waitFor(
      async () => (await history(server.admin)).find((e) => e.status === "running"),
      "a running deploy",
    );
    const cancel = card.getByRole("button", { name: "Cancel running deploy" });
    const stop = `Cancel the running deploy ${running.id.slice(0, 8)} of default?`;
    expect(await confirmWith(page, cancel, "no")).toBe(stop);
    expect(posts).toEqual(["/api/apps/default/deploy"]);
    expect((await history(server.admin))[0]).toMatchObject({ id: running.id, status: "running" });
    expect(await confirmWith(page, cancel)).toBe(stop);
    await waitFor(async () => (await history(server.admin))[0]?.status === "cancelled", "the cancel");

    await card.getByLabel("Reason to pause default").fill("a freeze");
    await card.getByRole("button", { name: "Pause" }).click();
    const resume = card.getByRole("button", { name: "Resume" });
    await shown(resume);
    const again = "Resume deploys of default? Pushes deploy it again from now on.";
    expect(await confirmWith(page, resume, "escape")).toBe(again);
    expect(posts.filter((path) => path.endsWith("/resume"))).toEqual([]);
    await shown(card.getByText("paused: a freeze"));
    expect(await confirmWith(page, resume)).toBe(again);
    await hasText(card.locator("dl"), (text) => text.includes("idle"));
  }, 60_000);

  test("switch back names the live commit and the release's with their subjects; going back leaves the live release as it is", async () => {
    const s = makeReleasesSite();
    await using server = await startAdmin(s.cwd, s.env);
    const one = (await deployStreamed(server.url, s.cwd)).result;
    const v2 = s.repo.push({ "public/index.html": "v2\n" }, "Add the search page");
    const two = (await deployStreamed(server.url, s.cwd)).result;
    await using context = await launchBrowser({ viewport: { width: 1280, height: 800 } });
    const page = await loggedIn(context, server.admin);
    const posts = postsOf(page);
    const card = page.getByRole("region", { name: "default" });
    const button = card.getByRole("button", { name: `Switch back to release ${one.release.id}` });
    await shown(button);
    const asked = `Switch default from ${v2.slice(0, 8)} 'Add the search page' to ${one.commit.sha.slice(0, 8)} 'initial' (release ${one.release.id})?`;
    expect(await confirmWith(page, button, "no")).toBe(asked);
    expect({ posts, live: currentRelease(s.site) }).toEqual({ posts: [], live: two.release.id });
    expect(await confirmWith(page, button)).toBe(asked);
    await waitFor(() => currentRelease(s.site) === one.release.id, "the switch back");
  }, 60_000);

  test("roll back and deploy again on a deploy's page, and deploy again in the history, name the commits; the dialog opens on Go back, has no serious axe-core violation, and going back deploys nothing", async () => {
    const repo = makeRepo();
    const first = repo.head();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "true" });
    const deployed = async () => (await (await post(`${server.url}/?format=json`, { secret: SECRET })).json()).id;
    const one = await deployed();
    const second = repo.push({ "b.txt": "b\n" }, "Fix the login");
    await deployed();
    await using context = await launchBrowser({ viewport: { width: 1280, height: 800 } });
    const page = await loggedIn(context, server.admin);
    const posts = postsOf(page);
    await shown(page.getByRole("region", { name: "default" }));

    await page.goto(`${server.admin}/deploys/${one}`);
    const rollback = page.getByRole("button", { name: "Roll back to this deploy" });
    await shown(rollback);
    const back = `Roll back default from ${second.slice(0, 8)} 'Fix the login' to ${first.slice(0, 8)} 'initial', the commit deploy ${one.slice(0, 8)} left?`;
    // The open dialog: focused on going back, and accessible.
    await rollback.click();
    const goBack = page.getByRole("dialog").getByRole("button", { name: "Go back" });
    await shown(goBack);
    expect(await goBack.evaluate((node) => node === document.activeElement)).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "hidden" });
    expect(await confirmWith(page, rollback, "no")).toBe(back);
    const again = page.getByRole("button", { name: "Deploy again" });
    const redo = `Deploy default again at ${first.slice(0, 8)} 'initial', the commit of deploy ${one.slice(0, 8)}?`;
    expect(await confirmWith(page, again, "escape")).toBe(redo);

    await page.goto(`${server.admin}/deploys`);
    const row = page.getByRole("button", { name: `Deploy again ${one.slice(0, 8)}` });
    expect(await confirmWith(page, row, "no")).toBe(redo);
    expect({ posts, deploys: (await history(server.admin)).length, head: repo.head() }).toEqual({
      posts: [],
      deploys: 2,
      head: second,
    });

    await page.goto(`${server.admin}/deploys/${one}`);
    expect(await confirmWith(page, rollback)).toBe(back);
    await waitFor(() => repo.head() === first, "the rollback");
  }, 60_000);
});
