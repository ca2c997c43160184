/**
 * Release tags as a trigger (docs/forges.md "Tag pushes"): with `tags` a glob or a semver range, a pushed tag
 * deploys its commit like `service deploy --ref` (the record's ref is `refs/tags/<name>`), a branch push is skipped
 * unless `branch` is set too, a tag on a commit off `branch` is refused, a range never goes below the live tag, and
 * a request naming no ref deploys the highest matching tag on the remote.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { git, makeRepo, post, type Repo, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";
import { atCommit, deployRecords, githubPush, gitlabHeaders, gitlabTagPush } from "../_support/webhook-fixtures.ts";

const pusherOf = (repo: Repo) => join(repo.dir, "pusher");

/** An annotated tag `name` on the pusher's HEAD, pushed; returns its commit. */
function pushTagHere(repo: Repo, name: string): string {
  git(pusherOf(repo), "tag", "-a", name, "-m", name);
  git(pusherOf(repo), "push", "--quiet", "origin", `refs/tags/${name}`);
  return git(pusherOf(repo), "rev-parse", "HEAD");
}

/** A new commit on main (pushed) tagged `name` (tag pushed too); returns the commit. */
function release(repo: Repo, name: string): string {
  repo.push({ "version.txt": `${name}\n` }, `release ${name}`);
  return pushTagHere(repo, name);
}

/** A GitHub push delivery of `ref` with the plain secret, answered as JSON. */
async function deliver(url: string, ref: string, commit?: string) {
  const payload = commit ? atCommit(githubPush(ref), commit) : githubPush(ref);
  const response = await post(`${url}/?format=json`, {
    headers: { "x-service-secret": SECRET, "x-github-event": "push", "content-type": "application/json" },
    body: JSON.stringify(payload),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

const start = (repo: Repo, env: Record<string, string>) =>
  startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed", ...env });

describe("tags: release tags as a trigger", () => {
  test("with a glob, a pushed tag matching it deploys that tag's commit; another tag and a branch push are skipped and counted", async () => {
    const repo = makeRepo();
    const tagged = release(repo, "v1.0.0");
    repo.push({ "later.txt": "x\n" }, "after the release");
    await using server = await startAdmin(repo.clone, { SERVICE_TAGS: "v*", SERVICE_RUN_SCRIPT: "echo deployed" });

    const deployed = await deliver(server.url, "refs/tags/v1.0.0");
    expect(deployed.body).toMatchObject({ ok: true });
    expect(repo.head()).toBe(tagged);
    const record = deployRecords(repo.clone).at(-1);
    expect(record).toMatchObject({ ref: "refs/tags/v1.0.0", status: "done" });
    expect(record.result.target).toMatchObject({ commit: tagged, ref: "refs/tags/v1.0.0", tag: "v1.0.0" });

    pushTagHere(repo, "release-2");
    const other = await deliver(server.url, "refs/tags/release-2");
    expect(other.body).toMatchObject({
      skipped: true,
      message: "tag release-2 does not match v*; this app deploys tags (v*)",
    });
    const branch = await deliver(server.url, "refs/heads/main");
    expect(branch.body).toMatchObject({ skipped: true, message: "a push to main: this app deploys tags (v*)" });
    // A branch named like a tag is a branch: refs are matched in full.
    git(pusherOf(repo), "push", "--quiet", "origin", "HEAD:refs/heads/v1.0");
    const lookalike = await deliver(server.url, "refs/heads/v1.0");
    expect(lookalike.body).toMatchObject({ skipped: true, message: "a push to v1.0: this app deploys tags (v*)" });
    expect(repo.head()).toBe(tagged);
    expect(deployRecords(repo.clone)).toHaveLength(1);

    // A GitLab tag push, streamed: the same trigger.
    const rc = release(repo, "v1.1.0");
    const text = await post(server.url, {
      headers: { ...gitlabHeaders(), "x-gitlab-event": "Tag Push Hook", "x-gitlab-token": SECRET },
      body: JSON.stringify(gitlabTagPush("v1.1.0")),
    }).then((r) => r.text());
    expect(text).toContain("[done] ok=true");
    expect(repo.head()).toBe(rc);

    const metrics = await fetch(`${server.admin}/metrics`).then((r) => r.text());
    expect(metrics).toContain('service_skipped_pushes_total{app="default",reason="tag"} 1');

    const status = await runCli(["status"], { cwd: repo.clone, env: { SERVICE_TAGS: "v*" } });
    expect(status.stdout).toMatch(/live: .* \(tag v1\.1\.0\)/);
    const json = await runCli(["status", "--json"], { cwd: repo.clone, env: { SERVICE_TAGS: "v*" } });
    expect(JSON.parse(json.stdout)).toMatchObject([{ liveTag: "v1.1.0", commit: rc }]);
  });

  test("with a branch too, a branch push deploys by branch and a tag on a commit not on that branch is refused naming both", async () => {
    const repo = makeRepo();
    await using server = await start(repo, { SERVICE_TAGS: "v*", SERVICE_BRANCH: "main" });
    const tip = repo.push({ "a.txt": "a\n" }, "on main");
    const pushed = await deliver(server.url, "refs/heads/main", tip);
    expect(pushed.body).toMatchObject({ ok: true });
    expect(repo.head()).toBe(tip);

    const pusher = pusherOf(repo);
    git(pusher, "checkout", "--quiet", "-b", "unmerged");
    git(pusher, "commit", "--quiet", "--allow-empty", "-m", "not reviewed");
    const unmerged = pushTagHere(repo, "v1.5.0");
    git(pusher, "checkout", "--quiet", "main");
    const refused = await deliver(server.url, "refs/tags/v1.5.0");
    expect(refused.body).toMatchObject({
      skipped: true,
      message: `tag v1.5.0 (${unmerged.slice(0, 12)}) is not on main`,
    });
    expect(repo.head()).toBe(tip);

    const onMain = release(repo, "v1.6.0");
    const deployed = await deliver(server.url, "refs/tags/v1.6.0");
    expect(deployed.body).toMatchObject({ ok: true });
    expect(repo.head()).toBe(onMain);
    // The check's scratch ref is gone: nothing is left in the clone.
    expect(git(repo.clone, "for-each-ref", "refs/service")).toBe("");
  });

  test("with a semver range, a late lower tag, a tag outside the range and a pre-release are skipped with the reason", async () => {
    const repo = makeRepo();
    const v142 = release(repo, "v1.4.2");
    release(repo, "v1.4.1");
    release(repo, "v2.0.0");
    release(repo, "v1.5.0-rc.1");
    await using server = await start(repo, { SERVICE_TAGS: "^1.4" });

    expect((await deliver(server.url, "refs/tags/v1.4.2")).body).toMatchObject({ ok: true });
    expect(repo.head()).toBe(v142);
    expect((await deliver(server.url, "refs/tags/v1.4.1")).body).toMatchObject({
      skipped: true,
      message: "tag v1.4.1 is lower than v1.4.2, which is live",
    });
    expect((await deliver(server.url, "refs/tags/v2.0.0")).body).toMatchObject({
      skipped: true,
      message: "tag v2.0.0 is not in the range ^1.4",
    });
    expect((await deliver(server.url, "refs/tags/v1.5.0-rc.1")).body).toMatchObject({
      skipped: true,
      message: "tag v1.5.0-rc.1 is not in the range ^1.4",
    });
    expect(repo.head()).toBe(v142);
  });

  test("a range naming a pre-release deploys a pre-release of that version", async () => {
    const repo = makeRepo();
    const rc = release(repo, "v1.5.0-rc.1");
    repo.push({ "later.txt": "x\n" }, "after the release candidate");
    await using server = await start(repo, { SERVICE_TAGS: "^1.5.0-rc.0" });
    expect((await deliver(server.url, "refs/tags/v1.5.0-rc.1")).body).toMatchObject({ ok: true });
    expect(repo.head()).toBe(rc);
  });

  test("a request naming no ref deploys the highest matching tag on the remote, in version order", async () => {
    const repo = makeRepo();
    release(repo, "v1.2.0");
    const v1100 = release(repo, "v1.10.0");
    release(repo, "v1.9.0");
    release(repo, "vnext");
    await using server = await start(repo, { SERVICE_TAGS: "v*" });
    const response = await post(`${server.url}/?format=json`, { secret: SECRET });
    expect(await response.json()).toMatchObject({ ok: true });
    expect(repo.head()).toBe(v1100);
    expect(deployRecords(repo.clone).at(-1)).toMatchObject({ ref: "refs/tags/v1.10.0" });
  });

  test("service deploy without --ref deploys the highest tag in the range; with none in it, one error line and nothing deployed", async () => {
    const repo = makeRepo();
    const v13 = release(repo, "v1.3.0");
    release(repo, "v2.0.0");
    repo.push({ "later.txt": "x\n" }, "after the releases");
    const env = { SERVICE_TAGS: "^1.0", SERVICE_RUN_SCRIPT: "true" };
    const deployed = await runCli(["deploy"], { cwd: repo.clone, env });
    expect(deployed.code).toBe(0);
    expect(deployed.stdout).toContain(`[pull] ref refs/tags/v1.3.0: git reset --hard ${v13.slice(0, 12)}`);
    expect(repo.head()).toBe(v13);

    const none = await runCli(["deploy"], { cwd: repo.clone, env: { ...env, SERVICE_TAGS: "^3" } });
    expect(none.code).toBe(1);
    expect(none.stderr + none.stdout).toContain("[error] tags ^3: no tag on the remote matches ^3");
    expect(deployRecords(repo.clone)).toHaveLength(1);
  });

  test("the admin API's deploy without a ref deploys the highest matching tag", async () => {
    const repo = makeRepo();
    const v2 = release(repo, "v2.1.0");
    release(repo, "v1.9.0");
    repo.push({ "later.txt": "x\n" }, "after the releases");
    await using server = await startAdmin(repo.clone, { SERVICE_TAGS: "v*", SERVICE_RUN_SCRIPT: "true" });
    const response = await fetch(`${server.admin}/api/apps/default/deploy`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(response.status).toBe(200);
    const record = await waitFor(() => deployRecords(repo.clone).find((r) => r.status === "done"), "the API's deploy");
    expect(record).toMatchObject({ trigger: "api", ref: "refs/tags/v2.1.0" });
    expect(repo.head()).toBe(v2);
  });
});

describe("tags and catch-up", () => {
  test("a tag push refused while paused is caught up on resume: the highest matching tag deploys, trigger catch-up", async () => {
    const repo = makeRepo();
    release(repo, "v1.0.0");
    await using server = await start(repo, { SERVICE_TAGS: "v*", SERVICE_CATCH_UP: "true" });
    expect((await deliver(server.url, "refs/tags/v1.0.0")).body).toMatchObject({ ok: true });
    expect((await runCli(["pause", "--reason", "audit"], { cwd: repo.clone })).code).toBe(0);
    const v11 = release(repo, "v1.1.0");
    const refused = await deliver(server.url, "refs/tags/v1.1.0");
    expect(refused.body).toMatchObject({ skipped: true });
    expect(repo.head()).not.toBe(v11);
    expect((await runCli(["resume"], { cwd: repo.clone })).code).toBe(0);
    const caught = await waitFor(
      () => deployRecords(repo.clone).find((r) => r.trigger === "catch-up" && r.status === "done"),
      "the catch-up deploy to end",
    );
    expect(caught.result.ok).toBe(true);
    expect(caught.result.target).toMatchObject({ commit: v11, tag: "v1.1.0" });
    expect(repo.head()).toBe(v11);
  });
});
