import { describe, expect, test } from "bun:test";
import { adminUrl } from "../_support/admin-helpers.ts";
import { makeRepo, runCli, SECRET, startServer } from "../_support/helpers.ts";
import {
  bitbucketPush,
  deployRecords,
  giteaPush,
  githubHeaders,
  githubPush,
  gitlabPush,
} from "../_support/webhook-fixtures.ts";
import { headMessageOf, markerIn, markersOf } from "../../src/triggers/markers.ts";
import { hookJson, MONOREPO, serviceDir } from "./_fixtures.ts";

/** A GitHub push whose commits say `messages` (the last one is the head), their ids made up. */
function githubPushSaying(...messages: string[]): Record<string, unknown> {
  const payload = githubPush("refs/heads/main", messages.length - 1) as { commits: Record<string, unknown>[] };
  for (const [i, commit] of payload.commits.entries()) commit.message = messages[i];
  return { ...payload, head_commit: payload.commits.at(-1) };
}

async function markersServer(env: Record<string, string> = {}) {
  const repo = makeRepo(MONOREPO);
  const cwd = serviceDir();
  const server = await startServer(cwd, {
    SERVICE_SECRET: SECRET,
    SERVICE_HOSTNAME: "127.0.0.1",
    SERVICE_REPO_PATH: repo.clone,
    SERVICE_RUN_SCRIPT: "echo deployed",
    SERVICE_ADMIN_PORT: "0",
    SERVICE_ADMIN_TOKEN: "admin-token-0123456789abcdef",
    SERVICE_SKIP_MARKERS: "1",
    ...env,
  });
  return Object.assign(server, { cwd, repo });
}

describe("skip markers", () => {
  test("each forge's head commit message is read from its payload", () => {
    const say = (payload: Record<string, unknown>) => headMessageOf(payload)?.message.trim();
    expect(say(githubPushSaying("older", "head [skip deploy]"))).toBe("head [skip deploy]");
    expect(say(gitlabPush())).toBe("Update README.md");
    expect(say(giteaPush())).toBe("Update README.md");
    expect(say(bitbucketPush())).toBe("Update README.md");
    expect(headMessageOf({ ref: "refs/heads/main" })).toBeUndefined();
    expect(headMessageOf(undefined)).toBeUndefined();
    // GitLab and Gitea: the commit whose id is `after`, not merely the last listed.
    const listed = {
      after: "b".repeat(40),
      commits: [
        { id: "b".repeat(40), message: "head" },
        { id: "a".repeat(40), message: "other" },
      ],
    };
    expect(headMessageOf(listed)).toEqual({ message: "head", commit: "b".repeat(40) });
  });

  test("the markers are found whatever their case; a list replaces the defaults", () => {
    expect(markerIn("Fix typo [SKIP DEPLOY]", markersOf(true))).toBe("[skip deploy]");
    expect(markerIn("docs [No Deploy]", markersOf(true))).toBe("[no deploy]");
    expect(markerIn("docs", markersOf(true))).toBeUndefined();
    expect(markerIn("docs [skip deploy]", markersOf(false))).toBeUndefined();
    expect(markerIn("docs [skip deploy]", markersOf(["[wip]"]))).toBeUndefined();
    expect(markerIn("docs [WIP]", markersOf(["[wip]"]))).toBe("[wip]");
  });

  test("a push whose head commit says any default marker, in any case, is skipped and counted", async () => {
    await using server = await markersServer();
    const messages = ["docs [skip deploy]", "Docs [Deploy Skip]", "ci only [SKIP CD]", "wip\n\n[no deploy]"];
    for (const message of messages) {
      const payload = githubPushSaying(message);
      const answer = await hookJson(server.url, payload, githubHeaders());
      expect(answer).toMatchObject({ skipped: true, reason: expect.stringMatching(/^commit 6113728f27ae says \[/) });
    }
    const text = await fetch(`${server.url}/`, {
      method: "POST",
      headers: { ...githubHeaders(), "x-service-secret": SECRET },
      body: JSON.stringify(githubPushSaying("docs [skip deploy]")),
    });
    expect(await text.text()).toBe("[skipped] commit 6113728f27ae says [skip deploy]\n");
    expect(deployRecords(server.cwd)).toEqual([]);
    const metrics = await (await fetch(`${adminUrl(server)}/metrics`)).text();
    expect(metrics).toContain('service_skipped_pushes_total{app="default",reason="marker"} 5');
    const status = JSON.parse(
      (await runCli(["status", "--json"], { cwd: server.cwd, env: { SERVICE_REPO_PATH: server.repo.clone } })).stdout,
    );
    expect(status[0].lastSkipped).toMatchObject({ reason: "marker", text: "commit 6113728f27ae says [skip deploy]" });
  });

  test("a custom list replaces the default markers", async () => {
    await using server = await markersServer({ SERVICE_SKIP_MARKERS: "[wip], [hold]" });
    expect(await hookJson(server.url, githubPushSaying("half done [WIP]"), githubHeaders())).toMatchObject({
      skipped: true,
      reason: "commit 6113728f27ae says [wip]",
    });
    expect((await hookJson(server.url, githubPushSaying("docs [skip deploy]"), githubHeaders())).ok).toBe(true);
  });

  test("a marker in an older commit of the push, not the head, deploys", async () => {
    await using server = await markersServer();
    const answer = await hookJson(server.url, githubPushSaying("wip [skip deploy]", "finished"), githubHeaders());
    expect(answer.ok).toBe(true);
  });

  test("service deploy ignores markers", async () => {
    await using server = await markersServer();
    const tip = server.repo.push({ "README.md": "2\n" }, "docs [skip deploy]");
    const env = {
      SERVICE_REPO_PATH: server.repo.clone,
      SERVICE_RUN_SCRIPT: "echo deployed",
      SERVICE_SKIP_MARKERS: "1",
    };
    const deployed = await runCli(["deploy"], { cwd: server.cwd, env });
    expect(deployed.code).toBe(0);
    expect(server.repo.head()).toBe(tip);
  });

  test("a curl push with no payload is judged by the fetched tip's message when paths fetch it", async () => {
    await using server = await markersServer({ SERVICE_PATHS: "apps/web/**" });
    expect((await hookJson(server.url)).ok).toBe(true);
    const tip = server.repo.push({ "apps/web/index.ts": "web 2\n" }, "web [skip deploy]");
    expect(await hookJson(server.url)).toMatchObject({
      skipped: true,
      reason: `commit ${tip.slice(0, 12)} says [skip deploy]`,
    });
  });
});
