/**
 * `deploy` and `logs` for a service that lives in another working directory (the README's server setup: the
 * service in /srv/…, the repository elsewhere): `--cwd DIR` uses DIR's config, logs and secrets, and `deploy`
 * names the config file it used.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deployIdOf } from "../_support/ops-helpers.ts";
import { git, lastLine, logFiles, makeRepo, runCli, tempDir } from "../_support/helpers.ts";

describe("--cwd DIR: act for the service in DIR", () => {
  test("deploy --cwd DIR run inside the repository: DIR's config and logs, the config file named, nothing left in the repository", async () => {
    const repo = makeRepo();
    const serviceDir = tempDir("service-home-");
    const configFile = join(serviceDir, "service.yaml");
    writeFileSync(configFile, `repoPath: ${repo.clone}\nrunScript: echo from-the-service-config\n`);
    const run = await runCli(["deploy", "--cwd", serviceDir], { cwd: repo.clone });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("from-the-service-config\n");
    expect(lastLine(run.stdout)).toBe("[done] ok=true exitCode=0");
    expect(run.stderr).toContain(`config: ${configFile}`);
    expect(logFiles(serviceDir)).toHaveLength(2);
    expect(existsSync(join(repo.clone, ".service"))).toBe(false);
    expect(git(repo.clone, "status", "--porcelain", "--untracked-files=all")).toBe("");

    // The README's debugging steps, from the same shell in the repository.
    const id = deployIdOf(run.stdout);
    const listed = await runCli(["logs", "--cwd", serviceDir], { cwd: repo.clone });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(id.slice(0, 8));
    const shown = await runCli(["logs", "last", "--cwd", serviceDir], { cwd: repo.clone });
    expect(shown.stdout).toContain("from-the-service-config\n");
    const followed = await runCli(["logs", id.slice(0, 8), "--follow", "--cwd", serviceDir], {
      cwd: repo.clone,
      timeoutMs: 15_000,
    });
    expect(lastLine(followed.stdout)).toBe("[done] ok=true exitCode=0");
  });

  test("a relative --cwd is taken from the current directory", async () => {
    const repo = makeRepo();
    const serviceDir = join(repo.dir, "service-home");
    mkdirSync(serviceDir);
    writeFileSync(join(serviceDir, "service.yaml"), `repoPath: ${repo.clone}\nrunScript: echo relative-ok\n`);
    const run = await runCli(["deploy", "--cwd", "../service-home"], { cwd: repo.clone });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("relative-ok\n");
    expect(logFiles(serviceDir)).toHaveLength(2);
  });

  test("deploy without a config file says so: the defaults and environment apply, and --cwd points to a service elsewhere", async () => {
    const repo = makeRepo();
    const run = await runCli(["deploy"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: "echo env-script" } });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`config: none in ${repo.clone}`);
    expect(run.stderr).toContain("--cwd DIR");
  });

  for (const command of ["deploy", "logs"]) {
    test(`${command} --cwd naming a missing directory or a file: one line, exit 1, nothing deployed`, async () => {
      const repo = makeRepo();
      const file = join(repo.dir, "a-file");
      writeFileSync(file, "");
      for (const dir of [join(repo.dir, "missing"), file]) {
        const run = await runCli([command, "--cwd", dir], {
          cwd: repo.clone,
          env: { SERVICE_RUN_SCRIPT: "echo must-not-run" },
        });
        expect(run.code).toBe(1);
        expect(run.stdout).toBe("");
        expect(run.stderr.trim().split("\n")).toEqual([expect.stringContaining(`--cwd ${dir}:`)]);
        expect(logFiles(repo.clone)).toEqual([]);
      }
    });
  }
});
