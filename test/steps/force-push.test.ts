/**
 * A force-push to the deployed branch (docs/deploy-control.md "After a force-push"): `git pull` fails and says
 * the clone and the remote have diverged, with the two ways out; `pull: reset` follows the remote's tip; a pull
 * that merges (`pull.rebase false`) never deploys a merge with a rewritten branch, nor a tree full of conflict
 * markers.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, lastLine, makeRepo, post, runCli, SECRET, startServer } from "../_support/helpers.ts";
import { forcePush, pushToRef } from "../_support/force-push.ts";
import {
  atCommit,
  githubHeaders,
  githubPush,
  hmacHex,
  markerCount,
  markerScript,
  deployRecords,
  writeServiceYaml,
} from "../_support/webhook-fixtures.ts";

const deploy = (cwd: string, args: string[] = []) => runCli(["deploy", ...args], { cwd });
const short = (commit: string) => commit.slice(0, 12);

/** A clone that has deployed a first push of app.txt ("v1"); its script prints app.txt and counts its runs. */
async function deployed(config: Record<string, unknown> = {}) {
  const repo = makeRepo({ "app.txt": "v0\n" });
  writeServiceYaml(repo.clone, { runScript: `cat app.txt\n${markerScript(repo.dir, "runs")}`, ...config });
  const first = repo.push({ "app.txt": "v1\n" }, "v1");
  const done = await deploy(repo.clone);
  expect(done.code).toBe(0);
  expect(repo.head()).toBe(first);
  return { repo, first, runs: () => markerCount(repo.dir, "runs") };
}

describe("git pull after a force-push", () => {
  test("a force-push makes git pull fail: the [pull] line says the clone and the remote have diverged and names service deploy --ref and pull: reset; --ref repairs the clone", async () => {
    const { repo, first, runs } = await deployed();
    const rewritten = forcePush(repo, { "app.txt": "v2\n" }, "HEAD~1", "v2, force-pushed");
    const ran = runs();
    const failed = await deploy(repo.clone);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(
      `[pull] failed: the clone and the remote have diverged (origin/main was force-pushed: it no longer contains ` +
        `HEAD ${short(first)}): deploy the remote's branch once with service deploy --ref main, or set pull: reset ` +
        `to follow force-pushes`,
    );
    expect(repo.head()).toBe(first);
    // A pull that failed is still followed by the run script, on the tree as it was (pulling → running, always).
    expect(runs()).toBe(ran + 1);
    expect(failed.stdout).toContain("[run] $ cat app.txt");

    const repaired = await deploy(repo.clone, ["--ref", "main"]);
    expect(repaired.code).toBe(0);
    expect(repo.head()).toBe(rewritten);
    const next = repo.push({ "app.txt": "v3\n" }, "v3");
    const after = await deploy(repo.clone);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain("v3");
    expect(repo.head()).toBe(next);
  });
});

describe("pull: reset", () => {
  test("pull: reset deploys the rewritten tip after a force-push: git fetch of the branch, then git reset --hard to it", async () => {
    const { repo, first } = await deployed({ pull: "reset" });
    const rewritten = forcePush(repo, { "app.txt": "v2\n" }, "HEAD~1", "v2, force-pushed");
    // A local change to a tracked file does not survive either.
    writeFileSync(join(repo.clone, "app.txt"), "edited on the server\n");
    const done = await deploy(repo.clone);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain("[pull] git fetch origin main");
    expect(done.stdout).toContain(`[pull] git reset --hard ${short(rewritten)} (the tip of origin/main)`);
    expect(done.stdout).toContain(`[pull] ${short(first)} -> ${short(rewritten)}`);
    expect(done.stdout).toContain("\nv2\n");
    expect(repo.head()).toBe(rewritten);
    expect(git(repo.clone, "status", "--porcelain", "--untracked-files=no")).toBe("");
  });

  test("pull: reset never resets to a commit a delivery names: one the force-push dropped, or one only a pull request has, is refused and nothing runs", async () => {
    const { repo, first, runs } = await deployed({ pull: "reset", branch: "main" });
    const rewritten = forcePush(repo, { "app.txt": "v2\n" }, "HEAD~1", "v2, force-pushed");
    const pullRequest = pushToRef(repo, "refs/pull/1/head", { "app.txt": "from a pull request\n" });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
    const before = runs();
    const deliver = async (commit: string) => {
      const body = JSON.stringify(atCommit(githubPush(), commit));
      const headers = { ...githubHeaders(), "x-hub-signature-256": `sha256=${hmacHex(SECRET, body)}` };
      return (await post(`${server.url}/?format=json`, { headers, body })).json();
    };

    const replayed = await deliver(first);
    expect(replayed.ok).toBe(false);
    expect(replayed.error).toStartWith(`HEAD ${short(rewritten)} does not contain the pushed commit ${short(first)}`);
    expect(repo.head()).toBe(rewritten);

    const fromPullRequest = await deliver(pullRequest);
    expect(fromPullRequest.ok).toBe(false);
    expect(fromPullRequest.error).toStartWith(`the pushed commit ${short(pullRequest)} is not in the repository`);
    expect(repo.head()).toBe(rewritten);
    expect(runs()).toBe(before);

    const tip = await deliver(rewritten);
    expect(tip.ok).toBe(true);
    expect(runs()).toBe(before + 1);
  });
});

describe("git pull that merges (pull.rebase false)", () => {
  test("pull.rebase false: a merge that conflicts is aborted: no conflict marker, the clone back at the commit from before, no unmerged path", async () => {
    const { repo, first } = await deployed();
    git(repo.clone, "config", "pull.rebase", "false");
    forcePush(repo, { "app.txt": "v2\n" }, "HEAD~1", "v2, force-pushed");
    const done = await deploy(repo.clone);
    expect(done.code).toBe(1);
    expect(done.stdout).not.toContain("<<<<<<<");
    expect(done.stdout).toContain(`[pull] failed: git pull's merge with origin/main conflicted; aborted`);
    expect(done.stdout).toContain("service deploy --ref main, or set pull: reset");
    // The spec's flow goes on as after any failed pull: the script runs, on the tree from before.
    expect(done.stdout).toContain("\nv1\n");
    expect(repo.head()).toBe(first);
    expect(readFileSync(join(repo.clone, "app.txt"), "utf8")).toBe("v1\n");
    expect(git(repo.clone, "status", "--porcelain", "--untracked-files=no")).toBe("");
    expect(existsSync(join(repo.clone, ".git", "MERGE_HEAD"))).toBe(false);
  });

  test("pull.rebase true: a rebase of the clone's own commit that conflicts is aborted too: the clone back on its branch at the commit from before", async () => {
    const { repo } = await deployed();
    git(repo.clone, "config", "pull.rebase", "true");
    writeFileSync(join(repo.clone, "app.txt"), "the server's own\n");
    git(repo.clone, "commit", "--quiet", "-am", "local");
    const own = repo.head();
    repo.push({ "app.txt": "v2\n" }, "v2");
    const done = await deploy(repo.clone);
    expect(done.code).toBe(1);
    expect(done.stdout).not.toContain("<<<<<<<");
    expect(done.stdout).toContain(`[pull] failed: git pull's rebase with origin/main conflicted; aborted`);
    expect(repo.head()).toBe(own);
    expect(git(repo.clone, "symbolic-ref", "--short", "HEAD")).toBe("main");
    expect(git(repo.clone, "status", "--porcelain", "--untracked-files=no")).toBe("");
  });

  test("pull.rebase false: a clean merge with a rewritten branch is refused: the clone is reset to the commit from before and nothing runs", async () => {
    const { repo, first, runs } = await deployed();
    git(repo.clone, "config", "pull.rebase", "false");
    forcePush(repo, { "other.txt": "x\n" }, "HEAD~1", "other, force-pushed");
    const before = runs();
    const done = await deploy(repo.clone);
    expect(done.code).toBe(1);
    const { result } = deployRecords(repo.clone).at(-1);
    expect(result.ok).toBe(false);
    expect(result.run.exitCode).toBeNull();
    expect(result.error).toBe(
      `git pull merged origin/main into HEAD ${short(first)}, but origin/main was force-pushed: it no longer ` +
        `contains ${short(first)}, and the merge exists nowhere on the remote; the clone is back at ` +
        `${short(first)}; deploy the remote's branch once with service deploy --ref main, or set pull: reset to ` +
        `follow force-pushes; nothing was run`,
    );
    expect(result.pull.after).toBe(first);
    expect(repo.head()).toBe(first);
    expect(existsSync(join(repo.clone, "other.txt"))).toBe(false);
    expect(runs()).toBe(before);
  });

  test("pull.rebase false: a clone with a commit of its own keeps today's merge and deploys it", async () => {
    const { repo, first } = await deployed();
    git(repo.clone, "config", "pull.rebase", "false");
    writeFileSync(join(repo.clone, "local.txt"), "the server's own\n");
    git(repo.clone, "add", "local.txt");
    git(repo.clone, "commit", "--quiet", "-m", "local");
    const pushed = repo.push({ "b.txt": "b\n" }, "b");
    const done = await deploy(repo.clone);
    expect(done.code).toBe(0);
    const parents = git(repo.clone, "rev-list", "--parents", "-n", "1", "HEAD").split(" ");
    expect(parents).toHaveLength(3);
    expect(parents.slice(1)).toContain(pushed);
    expect(existsSync(join(repo.clone, "local.txt"))).toBe(true);
    expect(existsSync(join(repo.clone, "b.txt"))).toBe(true);
    expect(lastLine(done.stdout)).toBe("[done] ok=true exitCode=0");
    expect(first).not.toBe(repo.head());
  });
});
