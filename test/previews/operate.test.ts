/**
 * docs/previews.md "Operating": `service previews [--app] [--json]`, `service preview deploy <n>`, `service preview
 * teardown <n>`, `GET /api/apps/<app>/previews`, `POST /api/apps/<app>/previews/<n>/teardown` and the counters.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN, bearer, startAdmin, type AdminServer } from "../_support/admin-helpers.ts";
import { makeRepo, runCli, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";
import {
  deliverPullRequest,
  githubPullRequest,
  previewOf,
  previewState,
  previewsKey,
  pushPullHead,
} from "../_support/pull-requests.ts";

const servers: AdminServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

describe("previews: operating them", () => {
  test("listed by the CLI and the API, torn down through the API, counted on /metrics", async () => {
    const repo = makeRepo();
    const cwd = tempDir();
    const key = previewsKey(cwd);
    writeServiceYaml(cwd, { repoPath: repo.clone, runScript: "echo production", path: "/hook", previews: key });
    const server = await startAdmin(cwd);
    servers.push(server);
    const head = pushPullHead(repo, 41);
    await deliverPullRequest(server, githubPullRequest(41, head, { branch: "feature/\u001b[31mred" }));
    await waitFor(() => previewOf(cwd, 41, ["running"]), "the preview");
    const fork = pushPullHead(repo, 42);
    await deliverPullRequest(server, githubPullRequest(42, fork, { fork: true }));

    const listed = await runCli(["previews", "--json"], { cwd });
    expect(listed.code).toBe(0);
    const [app] = JSON.parse(listed.stdout);
    expect(app).toMatchObject({
      app: "default",
      previews: [{ number: 41, status: "running", head, port: 41000, branch: "feature/\u001b[31mred" }],
      refusals: [{ number: 42, head: fork, reason: "fork" }],
    });
    const text = await runCli(["previews"], { cwd });
    expect(text.stdout).toContain(
      `#41 running feature/[31mred ${head.slice(0, 12)} https://pr-41.preview.example.com port 41000`,
    );
    expect(text.stdout).toContain(`refused #42 ${fork.slice(0, 12)} fork: pull request #42 comes from a fork`);
    expect(text.stdout).not.toContain("\u001b");

    const api = await fetch(`${server.admin}/api/apps/default/previews`, { headers: bearer() });
    expect(api.status).toBe(200);
    expect(await api.json()).toMatchObject({ app: "default", previews: [{ number: 41, status: "running" }] });
    const noToken = await fetch(`${server.admin}/api/apps/default/previews`);
    expect(noToken.status).toBe(401);

    const metrics = await (await fetch(`${server.admin}/metrics`, { headers: bearer() })).text();
    expect(metrics).toContain('service_previews{app="default"} 1');
    expect(metrics).toContain('service_preview_deploys_total{app="default",outcome="ok"} 1');
    expect(metrics).toContain('service_preview_refusals_total{app="default",reason="fork"} 1');

    const missing = await fetch(`${server.admin}/api/apps/default/previews/99/teardown`, {
      method: "POST",
      headers: bearer(ADMIN_TOKEN),
    });
    expect(missing.status).toBe(404);
    const teardown = await fetch(`${server.admin}/api/apps/default/previews/41/teardown`, {
      method: "POST",
      headers: bearer(ADMIN_TOKEN),
    });
    expect(teardown.status).toBe(202);
    await waitFor(() => previewState(cwd).previews.length === 0, "the teardown");
    expect(existsSync(join(key.path as string, "pr-41"))).toBe(false);
    const after = await (await fetch(`${server.admin}/metrics`, { headers: bearer() })).text();
    expect(after).toContain('service_preview_teardowns_total{app="default",outcome="ok"} 1');
    expect(after).toContain('service_previews{app="default"} 0');
  });

  test("service preview deploy <n> builds an open PR by hand; service preview teardown <n> removes it", async () => {
    const repo = makeRepo();
    const cwd = tempDir();
    const key = previewsKey(cwd);
    writeServiceYaml(cwd, {
      secret: SECRET,
      repoPath: repo.clone,
      runScript: "echo production",
      previews: key,
    });
    const head = pushPullHead(repo, 43);
    const deployed = await runCli(["preview", "deploy", "43"], { cwd });
    expect(deployed.stderr + deployed.stdout).toContain(
      "pull request #43: running at https://pr-43.preview.example.com",
    );
    expect(deployed.code).toBe(0);
    expect(previewOf(cwd, 43, ["running"])).toMatchObject({ head });
    expect(await Bun.file(join(key.path as string, "pr-43", "built.txt")).text()).toBe("built-43\n");
    const gone = await runCli(["preview", "teardown", "43"], { cwd });
    expect(gone.code).toBe(0);
    expect(previewState(cwd).previews).toEqual([]);
    expect(existsSync(join(key.path as string, "pr-43"))).toBe(false);
  });

  test("bad input is one line and a non-zero exit", async () => {
    const repo = makeRepo();
    const cwd = tempDir();
    writeServiceYaml(cwd, { secret: SECRET, repoPath: repo.clone, runScript: "true", previews: previewsKey(cwd) });
    for (const [args, said] of [
      [["preview", "deploy", "abc"], '"abc" is not a pull request\'s number'],
      [["preview", "rebuild", "1"], 'unknown action "rebuild"'],
      [["preview", "teardown", "5"], "pull request #5 has no preview"],
      [["preview", "deploy", "6"], "pull request #6: refs/pull/6/head is not on the remote"],
    ] as const) {
      const result = await runCli([...args], { cwd });
      expect(result.code).toBe(1);
      expect(result.stderr + result.stdout).toContain(said);
      expect(result.stderr).not.toContain("    at ");
    }
    const plain = tempDir();
    writeServiceYaml(plain, { secret: SECRET, repoPath: repo.clone, runScript: "true" });
    const none = await runCli(["previews"], { cwd: plain });
    expect(none.code).toBe(1);
    expect(none.stderr + none.stdout).toContain("no app sets previews");
  });
});
