/**
 * docs/watch.md "A staged rollout with analysis, through the forge": the canary's commit status stays pending while
 * it watches, so a second server whose gate pins that status waits for the canary's watch; a breach there sets the
 * status to failure, and the second server's gate shuts for the commit. The forge is a local server playing GitHub's
 * documented status and check run APIs, which both servers write and read.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { StreamReader } from "../_support/gate.ts";
import { GATE_TOKEN, githubChecks, OWNER_REPO } from "../_support/github-checks.ts";
import { git, lastLine, makeRepo, post, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";

/** A server's directory deploying `clone`, reporting its status as `context`, with `more` YAML lines. */
function server(clone: string, apiUrl: string, context: string, more: string[]): string {
  const cwd = tempDir("service-rollout-");
  writeFileSync(
    join(cwd, "service.yaml"),
    [
      `repoPath: ${clone}`,
      'runScript: "true"',
      `status: { provider: github, repo: ${OWNER_REPO}, apiUrl: ${apiUrl}, context: ${context} }`,
      ...more,
      "",
    ].join("\n"),
  );
  return cwd;
}

describe("watch: a staged rollout with analysis (docs/watch.md)", () => {
  test("the second server's gate waits for the canary's watch, and shuts when the canary's watch breaches", async () => {
    const forge = githubChecks({ [GATE_TOKEN]: "deploy-bot" });
    const repo = makeRepo();
    const second = join(repo.dir, "second");
    git(repo.dir, "clone", "--quiet", repo.remote, second);
    const flag = join(tempDir("service-rollout-flag-"), "errors");
    const canaryDir = server(repo.clone, forge.url, "deploy/web-1", [
      `watch: { forMs: 120000, intervalMs: 200, command: "test ! -e ${flag}" }`,
    ]);
    const secondDir = server(second, forge.url, "deploy/web-2", [
      "gate: { checks: [{ name: deploy/web-1, by: deploy-bot }], waitMs: 120000 }",
    ]);
    const env = { SERVICE_SECRET: SECRET, SERVICE_STATUS_TOKEN: GATE_TOKEN, SERVICE_HOSTNAME: "127.0.0.1" };
    await using canary = await startServer(canaryDir, env);
    await using follower = await startServer(secondDir, env);
    const before = repo.head();
    const sha = repo.push({ "v2.txt": "2\n" });
    const first = new StreamReader(await post(canary.url, { secret: SECRET }));
    await waitFor(() => /\[watch\] [\d.]+ of 2 min: exit 0/.test(first.text), "the canary's first check");
    await waitFor(
      () => forge.written.some((w) => w.sha === sha && w.context === "deploy/web-1" && w.state === "pending"),
      "the canary's pending status",
    );
    const next = new StreamReader(await post(follower.url, { secret: SECRET }));
    await waitFor(
      () => next.text.includes("[gate] waiting for deploy/web-1 by deploy-bot (pending)"),
      "the second server to wait for the canary",
    );
    // Nothing moved on the second server while the canary watches.
    expect(git(second, "rev-parse", "HEAD")).toBe(before);
    writeFileSync(flag, "");
    expect(lastLine(await first.done)).toBe("[done] ok=true exitCode=0");
    expect(first.text).toMatch(/\[watch\] breach: exit code 1 at .*; rolled back\n/);
    await next.done;
    expect(next.text).toContain("[gate] shut: deploy/web-1 by deploy-bot failure");
    expect(lastLine(next.text)).toBe("[done] ok=false exitCode=null");
    expect(git(second, "rev-parse", "HEAD")).toBe(before);
    expect(forge.written.filter((w) => w.context === "deploy/web-1").map((w) => w.state)).toEqual([
      "pending",
      "pending",
      "failure",
    ]);
    expect(forge.refused).toEqual([]);
  });
});
