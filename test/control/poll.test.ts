import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createConsola } from "consola";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import { listDeploys } from "../../src/history/read.ts";
import { readPollState, type PollState } from "../../src/control/poll.ts";
import {
  git,
  hasEnded,
  lastLine,
  makeRepo,
  post,
  runCli,
  SECRET,
  startServer,
  waitFor,
  type Repo,
} from "../_support/helpers.ts";
import { startLibraryServer } from "../_support/library.ts";
import { pollingServer } from "../_support/poll-helpers.ts";

const polls = (repo: Repo) => readPollState(repo.clone, undefined);
/** The last poll's state once `holds` is true of it. */
const pollWhere = (repo: Repo, holds: (state: PollState) => boolean) => {
  const state = polls(repo);
  return state && holds(state) ? state : undefined;
};
/** The deploys that ended. */
const deploys = (repo: Repo) => listDeploys(repo.clone).filter((e) => hasEnded(e.status));

describe("polling", () => {
  test("a pushed commit is deployed within the interval, as a deploy with trigger poll", async () => {
    const repo = makeRepo();
    await using _server = await pollingServer(repo, 150);
    await waitFor(() => polls(repo)?.result === "unchanged", "a first poll");
    const pushed = repo.push({ "a.txt": "1\n" });
    await waitFor(() => deploys(repo).length === 1, "the poll's deploy");
    const [entry] = deploys(repo);
    expect(entry!.trigger).toBe("poll");
    expect(entry!.actor).toBe("poll");
    expect(entry!.ok).toBe(true);
    expect(repo.head()).toBe(pushed);
    await waitFor(
      () => polls(repo)?.result === "unchanged" && polls(repo)?.commit === pushed,
      "a poll that finds nothing new",
    );
  });

  test("nothing is deployed when nothing changed", async () => {
    const repo = makeRepo();
    await using _server = await pollingServer(repo, 100);
    const first = await waitFor(() => polls(repo), "a first poll");
    // Three more polls, each one finding the remote's commit already checked out.
    await waitFor(() => pollWhere(repo, (s) => Date.parse(s.at) > Date.parse(first.at) + 250), "more polls");
    expect(polls(repo)).toMatchObject({ result: "unchanged", commit: repo.head(), failures: 0 });
    expect(listDeploys(repo.clone)).toEqual([]);
  });

  test("an unreachable remote backs off (doubling the wait) and recovers without a deploy storm, logged once each way", async () => {
    const repo = makeRepo();
    git(repo.clone, "remote", "set-url", "origin", join(repo.dir, "gone.git"));
    await using server = await pollingServer(repo, 100);
    const { said } = server;
    const one = await waitFor(() => pollWhere(repo, (s) => s.failures === 1), "a first failed poll");
    expect(one.result).toBe("failed");
    expect(one.detail).toContain("git ls-remote");
    expect(one.nextInMs).toBeGreaterThanOrEqual(200);
    expect(one.nextInMs).toBeLessThanOrEqual(220);
    const two = await waitFor(() => pollWhere(repo, (s) => s.failures >= 2), "a second failed poll");
    expect(two.failures).toBe(2);
    expect(two.nextInMs).toBeGreaterThanOrEqual(400);
    expect(two.nextInMs).toBeLessThanOrEqual(440);

    const pushed = repo.push({ "b.txt": "2\n" });
    git(repo.clone, "remote", "set-url", "origin", repo.remote);
    await waitFor(() => deploys(repo).length === 1, "the deploy once the remote answers");
    expect(repo.head()).toBe(pushed);
    await waitFor(() => polls(repo)?.result === "unchanged", "a poll after the deploy");
    expect(deploys(repo)).toHaveLength(1);
    expect(said.filter((line) => line.includes("polling of") && line.includes("fails:"))).toHaveLength(1);
    expect(said.filter((line) => line.includes("works again"))).toHaveLength(1);
  });

  test("a push that a webhook already deployed is not deployed again by the poll", async () => {
    const repo = makeRepo();
    await using server = await pollingServer(repo, 2000);
    await waitFor(() => polls(repo), "a first poll");
    const pushed = repo.push({ "c.txt": "3\n" });
    const answer = await post(server.url!, { secret: SECRET });
    expect(lastLine(await answer.text())).toBe("[done] ok=true exitCode=0");
    expect(repo.head()).toBe(pushed);
    await waitFor(
      () => polls(repo)?.commit === pushed && polls(repo)?.result === "unchanged",
      "a poll of the deployed commit",
    );
    expect(deploys(repo).map((e) => e.trigger)).toEqual(["webhook"]);
  });

  test("a failed deploy of a polled commit is not retried at every poll", async () => {
    const repo = makeRepo();
    await using server = await pollingServer(repo, 100, { runScript: "exit 3", rollbackOnFailure: true });
    const pushed = repo.push({ "d.txt": "4\n" });
    await waitFor(() => deploys(repo).length === 1, "the failed deploy");
    const after = await waitFor(() => pollWhere(repo, (s) => s.result === "unchanged"), "a poll after it");
    await waitFor(() => Date.parse(polls(repo)?.at ?? "") > Date.parse(after.at) + 250, "more polls");
    expect(repo.head()).not.toBe(pushed);
    expect(deploys(repo)).toHaveLength(1);
    await server.stop();
    // Nor after a restart: the commit tried is in the poll state file.
    await using _again = await pollingServer(repo, 100, { runScript: "exit 3", rollbackOnFailure: true });
    const started = Date.now();
    await waitFor(
      () => pollWhere(repo, (s) => s.result === "unchanged" && Date.parse(s.at) > started + 250),
      "polls after the restart",
    );
    expect(deploys(repo)).toHaveLength(1);
  });

  test("a paused app is not polled into a deploy", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: SECRET };
    expect((await runCli(["pause", "--reason", "freeze"], { cwd: repo.clone, env })).code).toBe(0);
    await using _server = await pollingServer(repo, 100);
    repo.push({ "e.txt": "5\n" });
    const state = await waitFor(() => polls(repo), "a poll");
    expect(state).toMatchObject({ result: "skipped", detail: "paused: freeze" });
    expect(listDeploys(repo.clone)).toEqual([]);
    expect((await runCli(["resume"], { cwd: repo.clone, env })).code).toBe(0);
    await waitFor(() => deploys(repo).length === 1, "the deploy after resume");
  });

  test("pollIntervalMs below 5000 is refused, from the file and the environment", async () => {
    const repo = makeRepo();
    const check = await runCli(["check"], { cwd: repo.clone, env: { SERVICE_POLL_INTERVAL_MS: "1000" } });
    expect(check.code).not.toBe(0);
    expect(check.stdout + check.stderr).toContain("SERVICE_POLL_INTERVAL_MS: expected at least 5000 milliseconds");
    writeFileSync(
      join(repo.clone, "service.yaml"),
      `poll_interval_ms: 4999\napps:\n  - name: web\n    host: web.example.com\n    path: /\n    repoPath: ${repo.clone}\n    runScript: echo\n    pollIntervalMs: 100\n`,
    );
    const fromFile = await runCli(["check"], { cwd: repo.clone, env: {} });
    expect(fromFile.code).not.toBe(0);
    expect(fromFile.stdout + fromFile.stderr).toContain(
      'key "poll_interval_ms": expected at least 5000 milliseconds, got 4999',
    );
    expect(fromFile.stdout + fromFile.stderr).toContain(
      '("web"): key "pollIntervalMs": expected at least 5000 milliseconds, got 100',
    );
  });

  test("service check reports a branch that cannot be polled (no upstream)", async () => {
    const repo = makeRepo();
    git(repo.clone, "checkout", "--quiet", "-b", "local-only");
    const check = await runCli(["check"], { cwd: repo.clone, env: { SERVICE_POLL_INTERVAL_MS: "60000" } });
    expect(check.code).not.toBe(0);
    expect(check.stdout + check.stderr).toContain("branch local-only");
    expect(check.stdout + check.stderr).toContain("has no upstream");
  });

  test("service status shows the last poll's time and result", async () => {
    const repo = makeRepo();
    await using server = await pollingServer(repo, 100);
    await waitFor(() => polls(repo), "a poll");
    await server.stop();
    const env = { SERVICE_POLL_INTERVAL_MS: "60000" };
    const json = await runCli(["status", "--json"], { cwd: repo.clone, env });
    expect(json.code).toBe(0);
    const [status] = JSON.parse(json.stdout);
    expect(status.poll).toMatchObject({ intervalMs: 60000, last: { result: "unchanged" } });
    const text = await runCli(["status"], { cwd: repo.clone, env });
    expect(text.stdout).toMatch(/polling: every 60 s, last unchanged .* ago/);
    expect(existsSync(join(repo.clone, ".service", "poll", "default.json"))).toBe(true);
  });

  test("the admin API's apps status and /metrics show the polls: service_polls_total{app,result}", async () => {
    const repo = makeRepo();
    const token = "admin-token-0123456789abcdef";
    await using server = await pollingServer(repo, 100, { adminPort: 0, adminToken: token });
    await waitFor(() => polls(repo), "a poll");
    const admin = server.adminUrl!;
    const apps = await (await fetch(`${admin}api/apps`, { headers: { authorization: `Bearer ${token}` } })).json();
    expect(apps.apps[0].poll).toMatchObject({
      intervalMs: 5000,
      last: { result: "unchanged", commit: repo.head(), failures: 0 },
    });
    const metrics = await (await fetch(`${admin}metrics`)).text();
    expect(metrics).toContain("# TYPE service_polls_total counter");
    expect(metrics).toMatch(/^service_polls_total\{app="default",result="unchanged"\} [1-9]\d*$/m);
  });

  test("the service command polls with SERVICE_POLL_INTERVAL_MS at its smallest value, 5000", async () => {
    const repo = makeRepo();
    await using _server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "echo deployed",
      SERVICE_POLL_INTERVAL_MS: "5000",
    });
    await waitFor(() => polls(repo), "the first poll, at start");
    const pushed = repo.push({ "f.txt": "6\n" });
    await waitFor(() => deploys(repo).length === 1, "the poll's deploy", 30_000);
    expect(deploys(repo)[0]!.trigger).toBe("poll");
    expect(repo.head()).toBe(pushed);
  });

  test("in multi-app mode only the apps with pollIntervalMs poll, each with its own state file", async () => {
    const web = makeRepo();
    const api = makeRepo();
    const app = (name: string, repo: Repo, extra: object = {}) => ({
      name,
      host: `${name}.example.com`,
      path: "/",
      repoPath: repo.clone,
      runScript: "echo deployed",
      secret: SECRET,
      ...extra,
    });
    const config = {
      ...defaultConfig(web.dir),
      port: 0,
      hostname: "127.0.0.1",
      apps: [app("web", web, { pollIntervalMs: 5000 }), app("api", api)],
    };
    const logger = createConsola({ level: -999 });
    await using _server = await startLibraryServer(config, { cwd: web.dir, logger, pollEveryMs: 100 });
    const pushedWeb = web.push({ "g.txt": "7\n" });
    api.push({ "g.txt": "7\n" });
    await waitFor(() => listDeploys(web.dir).some((e) => hasEnded(e.status)), "the web app's deploy");
    await waitFor(() => readPollState(web.dir, "web")?.result === "unchanged", "a later poll of web");
    expect(web.head()).toBe(pushedWeb);
    expect(listDeploys(web.dir).map((e) => [e.app, e.trigger])).toEqual([["web", "poll"]]);
    expect(readPollState(web.dir, "api")).toBeUndefined();
  });

  test("a failed poll's reason never carries the credentials of the remote's URL", async () => {
    const repo = makeRepo();
    git(repo.clone, "remote", "set-url", "origin", "http://deploy:hunter2-credential@127.0.0.1:1/app.git");
    await using server = await pollingServer(repo, 100);
    const { said } = server;
    const failed = await waitFor(() => pollWhere(repo, (s) => s.result === "failed"), "a failed poll");
    expect(failed.detail).toContain("git ls-remote origin failed");
    expect(JSON.stringify(failed)).not.toContain("hunter2");
    expect(said.join("\n")).not.toContain("hunter2");
  });
});
