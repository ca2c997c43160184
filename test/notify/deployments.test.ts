import { describe, expect, test } from "bun:test";
import { defaultConfig, type StatusSettings } from "../../src/config/schema.ts";
import { runDeploy } from "../../src/deploy/pipeline.ts";
import { OutboundCalls } from "../../src/notify/outbound.ts";
import { outboundSinks } from "../../src/notify/sink.ts";
import { baseEnv, makeRepo, tempDir, waitFor } from "../_support/helpers.ts";
import { DEPLOY_TOKEN, deploymentsApi, OWNER_REPO } from "../_support/deployments-api.ts";
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
