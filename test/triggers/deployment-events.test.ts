import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  git,
  makeRepo,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
  type RunningServer,
} from "../_support/helpers.ts";
import type { Repo } from "../_support/repo.ts";
import { ADMIN_TOKEN, adminUrl } from "../_support/admin-helpers.ts";
import { deployRecords, writeServiceYaml } from "../_support/webhook-fixtures.ts";
import { DEPLOY_TOKEN, deploymentsApi, OWNER_REPO, type DeploymentsApi } from "../_support/deployments-api.ts";
import { ADMIN, BOT, deliver, deploymentEvent, SITE } from "../_support/deployment-events.ts";

/** A commit on a branch of the remote other than main: on no ref the app deploys. */
function pushBranch(repo: Repo, branch: string): string {
  const pusher = join(repo.dir, "pusher");
  git(pusher, "checkout", "--quiet", "-B", branch);
  git(pusher, "commit", "--quiet", "--allow-empty", "-m", `on ${branch}`);
  git(pusher, "push", "--quiet", "origin", branch);
  const sha = git(pusher, "rev-parse", "HEAD");
  git(pusher, "checkout", "--quiet", "main");
  return sha;
}

async function serve(repo: Repo, api: DeploymentsApi, extra: Record<string, unknown>, runScript: string) {
  const cwd = tempDir();
  writeServiceYaml(cwd, {
    repoPath: repo.clone,
    runScript,
    secret: SECRET,
    hostname: "127.0.0.1",
    path: "/hook",
    branch: "main",
    status: { provider: "github", repo: OWNER_REPO, apiUrl: api.url, token: DEPLOY_TOKEN },
    ...extra,
  });
  return { cwd, server: await startServer(cwd, { SERVICE_ADMIN_PORT: "0", SERVICE_ADMIN_TOKEN: ADMIN_TOKEN }) };
}

describe("deploymentEvents: true", () => {
  const api = deploymentsApi();
  const repo = makeRepo();
  const flags = tempDir();
  let server: RunningServer;
  let cwd: string;
  let first: string;
  let tip: string;

  beforeAll(async () => {
    first = repo.push({ "v.txt": "1\n" });
    tip = repo.push({ "v.txt": "2\n" });
    // Fails while `fail` exists; waits while `hold` exists.
    const script = `if [ -f '${flags}/fail' ]; then exit 1; fi; while [ -f '${flags}/hold' ]; do sleep 0.05; done`;
    ({ cwd, server } = await serve(
      repo,
      api,
      {
        deploymentEvents: true,
        deploymentCreators: [BOT],
        deployRefs: ["release/*"],
        adminPublicUrl: ADMIN,
        environmentUrl: SITE,
      },
      script,
    ));
  });
  afterAll(() => server?.stop());

  const statesOf = (id: number) => api.statuses.filter((s) => s.id === id).map((s) => s.state);

  test("a deployment event deploys its commit, not the branch tip, and posts queued, in_progress, success with log_url and environment_url", async () => {
    mkdirSync(flags, { recursive: true });
    writeFileSync(join(flags, "hold"), "");
    const held = deliver(server, deploymentEvent(41, tip), "?format=json");
    await waitFor(() => statesOf(41).includes("in_progress"), "deployment 41 in progress");
    const queued = deliver(server, deploymentEvent(42, first), "?format=json");
    await waitFor(() => statesOf(42).includes("queued"), "deployment 42 queued");
    rmSync(join(flags, "hold"));
    const [a, b] = await Promise.all([(await held).json(), (await queued).json()]);
    expect([a.ok, b.ok]).toEqual([true, true]);
    // Exactly the deployment's commit: the older one, though main's tip is newer.
    expect(repo.head()).toBe(first);
    await waitFor(() => statesOf(42).length === 3, "deployment 42's final status");
    expect(statesOf(41)).toEqual(["in_progress", "success"]);
    expect(statesOf(42)).toEqual(["queued", "in_progress", "success"]);
    const last = api.statuses.filter((s) => s.id === 42).at(-1)!;
    expect(last.body).toMatchObject({ log_url: `${ADMIN}/deploys/${b.id}`, environment_url: SITE });
    expect(typeof last.body.description).toBe("string");
    // Never a second Deployment for it.
    expect(api.created).toEqual([]);
    const record = deployRecords(cwd).find((r) => r.id === b.id);
    expect(record).toMatchObject({
      trigger: "webhook",
      actor: BOT,
      ref: "main",
      event: "deployment",
      deployment: { id: 42, environment: "production", task: "deploy" },
    });
    const said = () =>
      (deployRecords(cwd).find((r) => r.id === b.id)?.outbound ?? []).filter((o: any) =>
        o.what.startsWith("deployment"),
      );
    await waitFor(() => said().length === 3, "the outcomes in the record");
    expect(said().map((o: any) => [o.what, o.ok])).toEqual([
      ["deployment queued", true],
      ["deployment in_progress", true],
      ["deployment success", true],
    ]);
    expect(api.refused).toEqual([]);
  });

  test("a deployment for another environment is skipped, deploys nothing, and is counted in service_skipped_pushes_total", async () => {
    const before = deployRecords(cwd).length;
    const response = await deliver(server, deploymentEvent(43, tip, { environment: "staging" }));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(
      "[skipped] deployment 43 is for environment staging; this app deploys production\n",
    );
    expect(deployRecords(cwd).length).toBe(before);
    expect(statesOf(43)).toEqual([]);
    const metrics = await fetch(`${adminUrl(server)}/metrics`).then((r) => r.text());
    expect(metrics).toContain('service_skipped_pushes_total{app="default",reason="environment"} 1');
  });

  test("a deployment of a ref that is neither the branch nor in deployRefs is refused, naming the ref", async () => {
    const sha = pushBranch(repo, "feature/x");
    const response = await deliver(server, deploymentEvent(44, sha, { ref: "feature/x" }));
    expect(await response.text()).toBe(
      "[skipped] deployment 44: ref feature/x is not the app's branch (main) nor in deployRefs\n",
    );
    expect(repo.head()).not.toBe(sha);
  });

  test("a deployment whose commit is not on its ref's tip at the remote is refused", async () => {
    const sha = pushBranch(repo, "feature/y");
    const response = await deliver(server, deploymentEvent(45, sha, { ref: "main" }));
    expect(await response.text()).toBe(
      `[skipped] deployment 45: commit ${sha.slice(0, 12)} is not on refs/heads/main at origin\n`,
    );
    expect(repo.head()).not.toBe(sha);
    // The private ref it was checked against is gone; the clone's own refs did not move.
    expect(git(repo.clone, "for-each-ref", "refs/service/")).toBe("");
    expect(git(repo.clone, "for-each-ref", "--format=%(refname)", "refs/remotes/")).not.toContain("feature/y");
  });

  test("a deployment of a ref deployRefs allows deploys its commit", async () => {
    const sha = pushBranch(repo, "release/1");
    const response = await deliver(server, deploymentEvent(46, sha, { ref: "release/1" }), "?format=json");
    expect((await response.json()).ok).toBe(true);
    expect(repo.head()).toBe(sha);
  });

  test("deploymentCreators refuses a deployment created by someone else, naming the creator", async () => {
    const response = await deliver(server, deploymentEvent(47, tip, { creator: "mallory" }));
    expect(await response.text()).toBe(`[skipped] deployment 47 was created by mallory; only ${BOT} may deploy\n`);
  });

  test("a failed deploy of a deployment posts failure", async () => {
    writeFileSync(join(flags, "fail"), "");
    try {
      const response = await deliver(server, deploymentEvent(48, tip), "?format=json");
      expect((await response.json()).ok).toBe(false);
      await waitFor(() => statesOf(48).length === 2, "deployment 48's final status");
      expect(statesOf(48)).toEqual(["in_progress", "failure"]);
    } finally {
      rmSync(join(flags, "fail"));
    }
    expect(api.refused).toEqual([]);
  });

  test("a deployment refused because deploys are paused gets error with the pause's reason, and nothing runs", async () => {
    expect((await runCli(["pause", "--reason", "db migration"], { cwd })).code).toBe(0);
    try {
      const before = deployRecords(cwd).length;
      const response = await deliver(server, deploymentEvent(49, tip));
      expect(await response.text()).toStartWith("[skipped] paused: db migration");
      await waitFor(() => statesOf(49).length === 1, "deployment 49's status");
      const [status] = api.statuses.filter((s) => s.id === 49);
      expect(status!.body).toMatchObject({ state: "error", environment_url: SITE });
      expect(status!.body.description).toBe("Not deployed: deploys are paused: db migration");
      expect(deployRecords(cwd)).toHaveLength(before);
    } finally {
      expect((await runCli(["resume"], { cwd })).code).toBe(0);
    }
    expect(api.refused).toEqual([]);
  });
});

test("without deploymentEvents, a deployment delivery is filtered as before", async () => {
  const api = deploymentsApi();
  const repo = makeRepo();
  const sha = repo.push({ "v.txt": "1\n" });
  const { cwd, server } = await serve(repo, api, {}, "true");
  await using _ = server;
  const response = await deliver(server, deploymentEvent(50, sha));
  expect(await response.text()).toBe("[skipped] deployment event; this app deploys pushes to branch main only\n");
  expect(deployRecords(cwd)).toEqual([]);
  expect(api.statuses).toEqual([]);
});
