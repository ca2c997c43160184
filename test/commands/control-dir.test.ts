import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeLocalRepo, makeRepo, runCli, SECRET, startServer, tempDir } from "../_support/helpers.ts";

const ID = "0b6c5f1e-3d5a-4c1e-9f4e-1a2b3c4d5e6f";

describe('control commands in a directory that is no service\'s (docs/cli.md "CLI")', () => {
  // The application's repository, as an operator would be in it: no config file, no .service/, no SERVICE_*.
  for (const args of [["pause"], ["resume"], ["status"], ["cancel", ID]]) {
    test(`service ${args[0]} refuses with one line naming the directory and --cwd, and creates no .service/`, async () => {
      const repo = makeLocalRepo();
      const result = await runCli(args, { cwd: repo });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      const lines = result.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`no service in ${repo}`);
      expect(lines[0]).toContain("--cwd");
      expect(existsSync(join(repo, ".service"))).toBe(false);
    });
  }

  test("--cwd naming a directory that is no service's is refused the same way", async () => {
    const empty = tempDir();
    const result = await runCli(["pause", "--cwd", empty], { cwd: makeLocalRepo() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`no service in ${empty}`);
    expect(existsSync(join(empty, ".service"))).toBe(false);
  });

  test("a config file, .service/ state or a SERVICE_* setting makes it the service's directory", async () => {
    const repo = makeLocalRepo();
    const withConfig = tempDir();
    writeFileSync(join(withConfig, "service.yaml"), `repoPath: ${repo}\n`);
    expect((await runCli(["status"], { cwd: withConfig })).code).toBe(0);
    const withState = tempDir();
    mkdirSync(join(withState, ".service"));
    expect((await runCli(["status", "--cwd", withState], { cwd: repo })).code).toBe(0);
    const fromEnv = await runCli(["pause"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "echo hi" } });
    expect(fromEnv.code).toBe(0);
    expect(existsSync(join(repo, ".service", "paused", "service.json"))).toBe(true);
  });

  test("a server configured by its environment alone marks its directory at start: a later pause there works", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo hi" });
    const paused = await runCli(["pause"], { cwd: repo.clone });
    expect(paused.code).toBe(0);
    expect(
      await (await fetch(server.url, { method: "POST", headers: { "x-service-secret": SECRET } })).text(),
    ).toStartWith("[skipped] paused");
  });
});
