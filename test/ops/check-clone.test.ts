/**
 * `service check` looks at the clone as the last fetch left it (docs/deploy-control.md "After a force-push"): a
 * clone diverged from its remote branch, and local changes to tracked files, are problems with their fix; commits
 * of the clone's own are named.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, makeRepo, runCli } from "../_support/helpers.ts";
import { forcePush } from "../_support/force-push.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";

const check = (cwd: string, env: Record<string, string> = {}) => runCli(["check"], { cwd, env });

/** The problem lines of the report (`  - …`). */
const problems = (stdout: string) =>
  stdout
    .split("\n")
    .filter((line) => line.startsWith("  - "))
    .map((line) => line.slice(4));

describe("service check and the clone", () => {
  test("service check reports a diverged clone (a force-push) and local changes to tracked files as problems, each with the fix", async () => {
    const repo = makeRepo();
    writeServiceYaml(repo.clone, { runScript: "true" });
    repo.push({ "b.txt": "b\n" }, "b");
    git(repo.clone, "pull", "--quiet", "--ff-only");
    expect((await check(repo.clone)).stdout).toContain("no problems found");
    const deployed = repo.head();
    forcePush(repo, { "c.txt": "c\n" }, "HEAD~1", "c, force-pushed");
    git(repo.clone, "fetch", "--quiet");

    const diverged = await check(repo.clone);
    expect(diverged.code).toBe(1);
    expect(problems(diverged.stdout)).toEqual([
      `the clone in ${repo.clone} and origin/main have diverged (origin/main was force-pushed: it no longer ` +
        `contains HEAD ${deployed.slice(0, 12)}): every git pull fails, or merges; deploy the remote's branch once ` +
        `with service deploy --ref main, or set pull: reset to follow force-pushes`,
    ]);
    // With pull: reset the next deploy follows the remote's tip: nothing to fix.
    expect((await check(repo.clone, { SERVICE_PULL: "reset" })).stdout).toContain("no problems found");

    git(repo.clone, "reset", "--quiet", "--hard", "origin/main");
    writeFileSync(join(repo.clone, "README.md"), "edited on the server\n");
    const changed = await check(repo.clone);
    expect(changed.code).toBe(1);
    expect(problems(changed.stdout)).toEqual([
      `the clone in ${repo.clone} has local changes to tracked files (README.md): git pull fails on them or ` +
        `deploys them; commit and push them, or drop them with git -C ${repo.clone} checkout -- .`,
    ]);
  });

  test("service check names the commits a clone carries of its own (git pull merges them), and that pull: reset would drop them", async () => {
    const repo = makeRepo();
    writeServiceYaml(repo.clone, { runScript: "true" });
    git(repo.clone, "commit", "--quiet", "--allow-empty", "-m", "the server's own");
    const own = await check(repo.clone);
    expect(own.code).toBe(0);
    expect(own.stdout).toContain(
      `warning: the clone in ${repo.clone} carries 1 commit of its own, not on origin/main: git pull merges it ` +
        `into every deploy`,
    );
    const reset = await check(repo.clone, { SERVICE_PULL: "reset" });
    expect(reset.stdout).toContain(
      `warning: the clone in ${repo.clone} carries 1 commit of its own, not on origin/main: pull: reset drops it ` +
        `at the next deploy`,
    );
  });
});

describe("the pull key", () => {
  test("pull is accepted from SERVICE_PULL and per app; a bad value is a clear config error", async () => {
    const repo = makeRepo();
    writeServiceYaml(repo.clone, { runScript: "true" });
    const fromEnv = await check(repo.clone, { SERVICE_PULL: "reset" });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stdout).toMatch(/\n {2}pull +reset +\[env\]\n/);
    const bad = await check(repo.clone, { SERVICE_PULL: "rebase" });
    expect(bad.code).toBe(1);
    expect(problems(bad.stdout)).toContain(
      `environment variable SERVICE_PULL: expected "pull" (git pull) or "reset" (git fetch, then git reset --hard ` +
        `to the remote branch's tip), got "rebase"`,
    );

    const apps = (pull: string) =>
      writeServiceYaml(repo.dir, {
        apps: [{ name: "web", host: "web.example.com", path: "/", repoPath: repo.clone, runScript: "true", pull }],
      });
    apps("reset");
    const perApp = await check(repo.dir);
    expect(perApp.code).toBe(0);
    expect(perApp.stdout).toContain("    pull: reset");
    apps("merge");
    const badApp = await check(repo.dir);
    expect(badApp.code).toBe(1);
    expect(badApp.stdout).toContain(`key "pull": expected "pull" (git pull) or "reset"`);
  });
});
