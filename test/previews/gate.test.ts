/**
 * docs/previews.md "Trust": with `previews.gate: true` and the app's `gate`, a preview's head is built only once the
 * forge's required checks on it are success; a failed check fails the preview with why. Without `previews.gate` the
 * gate does not apply to previews. GitHub's statuses API played locally, each request checked (github-checks.ts).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { githubChecks } from "../_support/github-checks.ts";
import { makeRepo, SECRET, startServer, tempDir, waitFor, type RunningServer } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";
import {
  deliverPullRequest,
  githubPullRequest,
  previewOf,
  previewsKey,
  pushPullHead,
} from "../_support/pull-requests.ts";

const TOKEN = "forge-token-previews-gate-0123456789";
const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

async function serve(gateOnPreviews: boolean) {
  const api = githubChecks({ [TOKEN]: "deploy-bot" });
  const repo = makeRepo();
  const cwd = tempDir();
  const previews = previewsKey(cwd, { gate: gateOnPreviews });
  writeServiceYaml(cwd, {
    secret: SECRET,
    repoPath: repo.clone,
    runScript: "echo production",
    path: "/hook",
    status: { provider: "github", apiUrl: api.url, repo: "acme/web", token: TOKEN },
    gate: { checks: ["ci/test"], waitMs: 60_000 },
    previews,
  });
  const server = await startServer(cwd);
  servers.push(server);
  return { api, repo, cwd, server, path: previews.path as string };
}

describe("previews: the gate", () => {
  test("with previews.gate, a failed check fails the preview and nothing is built", async () => {
    const { api, repo, cwd, server, path } = await serve(true);
    const head = pushPullHead(repo, 71);
    api.status(head, "ci/test", "failure");
    await deliverPullRequest(server, githubPullRequest(71, head));
    const preview = await waitFor(() => previewOf(cwd, 71, ["failed", "running"]), "the verdict");
    expect(preview.status).toBe("failed");
    expect(preview.reason).toContain("the gate is shut");
    expect(existsSync(join(path, "pr-71"))).toBe(false);
    // The pull request is told: its preview's deployment ends in failure.
    const told = await waitFor(
      () => api.deployments.find((each) => each.states.includes("failure")),
      "the failure told",
    );
    expect(told).toMatchObject({ ref: head, environment: "preview/pr-71" });
    expect(api.refused).toEqual([]);
  });

  test("with previews.gate, a pending check holds the build until it is success", async () => {
    const { api, repo, cwd, server } = await serve(true);
    const head = pushPullHead(repo, 72);
    api.status(head, "ci/test", "pending");
    await deliverPullRequest(server, githubPullRequest(72, head));
    await waitFor(() => api.reads() >= 1, "the first read of the checks");
    expect(previewOf(cwd, 72, ["building"])).toBeDefined();
    api.status(head, "ci/test", "success");
    await waitFor(() => previewOf(cwd, 72, ["running"]), "the build after the checks passed", 30_000);
    expect(api.refused).toEqual([]);
  });

  test("without previews.gate, the app's gate does not hold previews", async () => {
    const { api, repo, cwd, server } = await serve(false);
    const head = pushPullHead(repo, 73);
    api.status(head, "ci/test", "failure");
    await deliverPullRequest(server, githubPullRequest(73, head));
    await waitFor(() => previewOf(cwd, 73, ["running"]), "the preview");
    expect(api.reads()).toBe(0);
  });
});
