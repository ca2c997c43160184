/**
 * docs/previews.md "Life cycle": a new commit rebuilds in the same directory on the same port (what the last build
 * left running stopped first); a close runs the teardown script, stops what the preview left running, removes its
 * directory and frees its port; a failed teardown is kept as `teardown failed` and tried again; after a restart a
 * preview whose processes are gone is `stopped`; `ttlDays` tears down what was not updated; a preview's build never
 * holds production's queue.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, post, SECRET, startServer, tempDir, waitFor, type RunningServer } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";
import {
  deliverPullRequest,
  githubPullRequest,
  previewOf,
  previewState,
  previewsKey,
  pushPullHead,
} from "../_support/pull-requests.ts";

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

/** A run script that leaves a server running (a `sleep` that names the build's head in its arguments). */
const SERVE = `sh -c 'sleep 300; : "$0"' "serving-$SERVICE_COMMIT" > /dev/null 2>&1 &\necho "$SERVICE_PREVIEW_PORT" > port.txt`;

function pids(pattern: string): number[] {
  const out = Bun.spawnSync(["pgrep", "-f", pattern]).stdout.toString();
  return out.split("\n").filter(Boolean).map(Number);
}

async function setup(previews: Record<string, unknown> = {}) {
  const repo = makeRepo();
  const cwd = tempDir();
  const key = previewsKey(cwd, { runScript: SERVE, ...previews });
  const config = { secret: SECRET, repoPath: repo.clone, runScript: "echo production", path: "/hook", previews: key };
  writeServiceYaml(cwd, config);
  const start = async () => {
    const server = await startServer(cwd);
    servers.push(server);
    return server;
  };
  return { repo, cwd, path: key.path as string, start };
}

describe("previews: life cycle", () => {
  test("a new commit rebuilds in the same directory and port; what the old build left running is stopped", async () => {
    const { repo, cwd, path, start } = await setup();
    const server = await start();
    const first = pushPullHead(repo, 31);
    await deliverPullRequest(server, githubPullRequest(31, first));
    await waitFor(() => previewOf(cwd, 31, ["running"]), "the first build");
    expect(pids(`serving-${first}`)).toHaveLength(1);
    const second = pushPullHead(repo, 31, { "app.txt": "second\n" });
    await deliverPullRequest(server, githubPullRequest(31, second, { action: "synchronize" }));
    const rebuilt = await waitFor(
      () => previewOf(cwd, 31, ["running"])?.head === second && previewOf(cwd, 31, ["running"]),
      "the rebuild",
    );
    expect(rebuilt.port).toBe(41000);
    expect(readFileSync(join(path, "pr-31", "app.txt"), "utf8")).toBe("second\n");
    expect(readFileSync(join(path, "pr-31", "port.txt"), "utf8")).toBe("41000\n");
    expect(pids(`serving-${first}`)).toEqual([]);
    expect(pids(`serving-${second}`)).toHaveLength(1);
  });

  test("a close tears down: the teardown script, what it left running, its directory; the port is free again", async () => {
    const marks = tempDir();
    const { repo, cwd, path, start } = await setup({
      teardownScript: 'echo "down $SERVICE_PREVIEW_NUMBER" >> "$MARKS/teardown.txt"',
      env: { MARKS: marks },
    });
    const server = await start();
    const head = pushPullHead(repo, 32);
    await deliverPullRequest(server, githubPullRequest(32, head));
    await waitFor(() => previewOf(cwd, 32, ["running"]), "the build");
    expect(pids(`serving-${head}`)).toHaveLength(1);
    const closed = await deliverPullRequest(server, githubPullRequest(32, head, { action: "closed", merged: true }));
    expect(await closed.text()).toContain("[preview] pull request #32 closed: its preview is torn down");
    await waitFor(() => previewState(cwd).previews.length === 0, "the teardown");
    expect(readFileSync(join(marks, "teardown.txt"), "utf8")).toBe("down 32\n");
    expect(existsSync(join(path, "pr-32"))).toBe(false);
    expect(pids(`serving-${head}`)).toEqual([]);
    const next = pushPullHead(repo, 33);
    await deliverPullRequest(server, githubPullRequest(33, next));
    expect((await waitFor(() => previewOf(cwd, 33, ["running"]), "the next preview")).port).toBe(41000);
  });

  test("a failed teardown is listed with why and tried again at the next start; a restart leaves gone previews stopped", async () => {
    const marks = tempDir();
    const { repo, cwd, path, start } = await setup({
      teardownScript: 'test -f "$MARKS/allow"',
      env: { MARKS: marks },
    });
    const server = await start();
    const kept = pushPullHead(repo, 34);
    await deliverPullRequest(server, githubPullRequest(34, kept));
    await waitFor(() => previewOf(cwd, 34, ["running"]), "the build");
    expect(pids(`serving-${kept}`)).toHaveLength(1);
    await deliverPullRequest(server, githubPullRequest(34, kept, { action: "closed" }));
    const failed = await waitFor(() => previewOf(cwd, 34, ["teardown failed"]), "the failed teardown");
    expect(failed.reason).toContain('teardown script: `test -f "$MARKS/allow"` exited with 1');
    // What it left running is stopped all the same; its directory stays for the next try.
    expect(pids(`serving-${kept}`)).toEqual([]);
    expect(existsSync(join(path, "pr-34"))).toBe(true);
    // A preview whose processes die while the service is down.
    const other = pushPullHead(repo, 35);
    await deliverPullRequest(server, githubPullRequest(35, other));
    await waitFor(() => previewOf(cwd, 35, ["running"]), "the other build");
    expect(pids(`serving-${other}`)).toHaveLength(1);
    await server.stop();
    // Its server dies (the machine's OOM killer, a reboot of its container): its whole group.
    for (const group of previewOf(cwd, 35, ["running"]).groups)
      Bun.spawnSync(["kill", "-KILL", "--", `-${group.pgid}`]);
    await waitFor(() => pids(`serving-${other}`).length === 0, "the other preview's processes gone");
    writeFileSync(join(marks, "allow"), "");
    await start();
    await waitFor(
      () => previewOf(cwd, 34, ["teardown failed"]) === undefined && !existsSync(join(path, "pr-34")),
      "the retry",
    );
    const stopped = previewOf(cwd, 35, ["stopped"]);
    expect(stopped?.reason).toContain("its processes were gone after a restart");
  });

  test("ttlDays: a preview not updated for that long is torn down at start", async () => {
    const { repo, cwd, path, start } = await setup({ ttlDays: 1 });
    const server = await start();
    const head = pushPullHead(repo, 36);
    await deliverPullRequest(server, githubPullRequest(36, head));
    await waitFor(() => previewOf(cwd, 36, ["running"]), "the build");
    expect(pids(`serving-${head}`)).toHaveLength(1);
    await server.stop();
    const file = join(cwd, ".service", "previews", "default.json");
    const state = JSON.parse(readFileSync(file, "utf8"));
    state.previews[0].updated = new Date(Date.now() - 2 * 86_400_000).toISOString();
    writeFileSync(file, JSON.stringify(state));
    await start();
    await waitFor(() => previewState(cwd).previews.length === 0 && !existsSync(join(path, "pr-36")), "the expiry");
    expect(pids(`serving-${head}`)).toEqual([]);
  });

  test("a preview building never holds production's queue", async () => {
    const gate = tempDir();
    const { repo, cwd, start } = await setup({
      runScript: `i=0; while [ ! -f "$GATE/go" ] && [ $i -lt 6000 ]; do sleep 0.05; i=$((i+1)); done`,
      env: { GATE: gate },
    });
    const server = await start();
    const head = pushPullHead(repo, 37);
    await deliverPullRequest(server, githubPullRequest(37, head));
    await waitFor(() => previewOf(cwd, 37, ["building"]), "the preview building");
    const production = await post(`${server.url}/hook`, { secret: SECRET });
    expect(await production.text()).toContain("[done] ok=true exitCode=0");
    expect(previewOf(cwd, 37, ["building"])).toBeDefined();
    writeFileSync(join(gate, "go"), "");
    await waitFor(() => previewOf(cwd, 37, ["running"]), "the preview built");
  });
});
