import { describe, expect, test } from "bun:test";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import type { StatusSettings } from "../../src/config/schema-notify.ts";
import { runDeploy } from "../../src/deploy/pipeline.ts";
import { OutboundCalls } from "../../src/notify/outbound.ts";
import { outboundSinks } from "../../src/notify/sink.ts";
import { baseEnv, makeRepo, tempDir, waitFor } from "../_support/helpers.ts";
import { DEPLOY_TOKEN, deploymentsApi, OWNER_REPO, type DeploymentsApi } from "../_support/deployments-api.ts";
import { outcomes } from "../_support/outbound-outcomes.ts";

/** The outbound calls of the deploys below, as a server tracks its own. */
const calls = new OutboundCalls();

async function deploy(
  repoPath: string,
  status: StatusSettings,
  runScript = "echo deployed",
  rollbackOnFailure = false,
) {
  const cwd = tempDir();
  const config = { ...defaultConfig(cwd), repoPath, runScript, rollbackOnFailure, branch: "main", status };
  return runDeploy({
    id: crypto.randomUUID(),
    outbound: outboundSinks(calls),
    config,
    trigger: "cli",
    cwd,
    env: baseEnv(),
  });
}

describe("GitLab deployments (status.deployments: true)", () => {
  const gitlab = (url: string): StatusSettings => ({
    provider: "gitlab",
    apiUrl: `${url}/api/v4`,
    repo: OWNER_REPO,
    token: DEPLOY_TOKEN,
    deployments: true,
    environment: "production",
  });

  test("a deploy is a GitLab deployment: created running on the pulled commit, then updated to success", async () => {
    const api = deploymentsApi();
    const repo = makeRepo();
    const sha = repo.push({ "v.txt": "2\n" });
    const result = await deploy(repo.clone, gitlab(api.url));
    expect(result.ok).toBe(true);
    await outcomes(result.log.json, 4);
    await waitFor(() => api.gitlab.length === 2, "the deployment's update");
    const [created, updated] = api.gitlab;
    expect(created).toMatchObject({
      call: "create",
      body: { environment: "production", sha, ref: "main", tag: false, status: "running" },
    });
    expect(updated).toEqual({ call: "update", id: created!.id, body: { status: "success" } });
    expect(api.refused).toEqual([]);
  });

  test("a failed deploy updates its GitLab deployment to failed", async () => {
    const api = deploymentsApi();
    const repo = makeRepo();
    const sha = repo.push({ "v.txt": "2\n" });
    const result = await deploy(repo.clone, gitlab(api.url), "exit 3");
    expect(result.ok).toBe(false);
    await waitFor(() => api.gitlab.length === 2, "the deployment's update");
    expect(api.gitlab.map((c) => [c.call, c.body.status, c.body.sha])).toEqual([
      ["create", "running", sha],
      ["update", "failed", undefined],
    ]);
    expect(api.refused).toEqual([]);
  });
});

describe("GitHub Deployments after a rollback (status.deployments: true)", () => {
  const github = (url: string): StatusSettings => ({
    provider: "github",
    apiUrl: url,
    repo: OWNER_REPO,
    token: DEPLOY_TOKEN,
    deployments: true,
  });
  const statesOf = (api: DeploymentsApi, id: number) => api.statuses.filter((s) => s.id === id).map((s) => s.state);

  test("a failed deploy's rollback creates a Deployment for the commit live again and marks the failed one inactive", async () => {
    const api = deploymentsApi();
    const repo = makeRepo();
    const live = repo.head();
    const failing = repo.push({ "v.txt": "2\n" });
    // Fails on the new commit only: the rollback's run at the previous commit works.
    const result = await deploy(repo.clone, github(api.url), "! grep -q 2 v.txt 2>/dev/null", true);
    expect(result.rollback?.ok).toBe(true);
    await waitFor(() => api.statuses.length === 4, "the rollback's statuses");
    const [first, second] = api.created;
    expect([first?.ref, second?.ref]).toEqual([failing, live]);
    expect(statesOf(api, first!.id)).toEqual(["in_progress", "failure", "inactive"]);
    expect(statesOf(api, second!.id)).toEqual(["success"]);
    expect(api.refused).toEqual([]);
  });

  test("service rollback: the commit live again gets a new Deployment, and the one rolled back from ends inactive", async () => {
    const api = deploymentsApi();
    const repo = makeRepo();
    const previous = repo.head();
    const pushed = repo.push({ "v.txt": "2\n" });
    expect((await deploy(repo.clone, github(api.url))).ok).toBe(true);
    await waitFor(() => api.statuses.length === 2, "the first deploy's statuses");
    const cwd = tempDir();
    const rollback = await runDeploy({
      id: crypto.randomUUID(),
      outbound: outboundSinks(calls),
      config: {
        ...defaultConfig(cwd),
        repoPath: repo.clone,
        runScript: "true",
        status: github(api.url),
        environmentUrl: "https://web.example.com",
      },
      trigger: "rollback",
      target: { commit: previous, deployId: null },
      cwd,
      env: baseEnv(),
    });
    expect(rollback.ok).toBe(true);
    await waitFor(() => api.statuses.length === 5, "the rollback's statuses");
    const [old, live] = api.created;
    expect([old?.ref, live?.ref]).toEqual([pushed, previous]);
    expect(statesOf(api, live!.id)).toEqual(["in_progress", "success"]);
    expect(api.statuses.at(-2)?.body).toMatchObject({ state: "success", environment_url: "https://web.example.com" });
    expect(statesOf(api, old!.id)).toEqual(["in_progress", "success", "inactive"]);
    expect(api.refused).toEqual([]);
  });
});
