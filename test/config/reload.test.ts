import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastLine, makeRepo, post, SECRET, startServer, tempDir } from "../_support/helpers.ts";
import { FAILURE_BURST } from "../../src/http/throttle.ts";

async function deploy(url: string): Promise<string> {
  return (await post(url, { secret: SECRET })).text();
}

describe('config reload (docs/configuration.md "Config from the repository")', () => {
  test("after the pull, runScript and runTimeoutMs come from the repository's config file as pulled", async () => {
    const repo = makeRepo({ "service.yaml": "runScript: echo script-v1\n" });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
    expect(await deploy(server.url)).toContain("script-v1");
    repo.push({ "service.yaml": "runScript: echo script-v2\nrunTimeoutMs: 700\n" }, "new deploy script");
    const text = await deploy(server.url);
    expect(text).toContain("script-v2");
    expect(text).not.toContain("script-v1");
    repo.push({ "service.yaml": "runScript: sleep 30\nrunTimeoutMs: 700\n" }, "a timeout from the repository");
    const timedOut = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(timedOut.run.timedOut).toBe(true);
  });

  test("environment variables still override the repository's config file", async () => {
    const repo = makeRepo({ "service.yaml": "runScript: echo from-file\n" });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo from-env" });
    repo.push({ "service.yaml": "runScript: echo from-file-v2\n" });
    const text = await deploy(server.url);
    expect(text).toContain("from-env");
    expect(text).not.toContain("from-file");
  });

  test("SERVICE_CONFIG outside the repository skips the post-pull reload", async () => {
    const repo = makeRepo({ "service.yaml": "runScript: echo repo-file\n" });
    const outside = join(tempDir(), "outside.yaml");
    writeFileSync(outside, `repoPath: ${repo.clone}\nrunScript: echo outside-file\n`);
    await using server = await startServer(tempDir(), { SERVICE_SECRET: SECRET, SERVICE_CONFIG: outside });
    const text = await deploy(server.url);
    expect(text).toContain("outside-file");
    expect(text).not.toContain("repo-file");
  });

  test("SERVICE_CONFIG pointing inside the repository is reloaded from the pulled tree", async () => {
    const repo = makeRepo({ "deploy.yaml": "runScript: echo inside-v1\n" });
    await using server = await startServer(tempDir(), {
      SERVICE_SECRET: SECRET,
      SERVICE_REPO_PATH: repo.clone,
      SERVICE_CONFIG: join(repo.clone, "deploy.yaml"),
    });
    repo.push({ "deploy.yaml": "runScript: echo inside-v2\n" });
    const text = await deploy(server.url);
    expect(text).toContain("inside-v2");
  });

  test("a repository config file that became invalid keeps the current script and says so in the stream and the log", async () => {
    const repo = makeRepo({ "service.yaml": "runScript: echo still-good\n" });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
    expect(await deploy(server.url)).toContain("still-good");
    repo.push({ "service.yaml": "runScript: [unclosed\n" }, "broken yaml");
    const result = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(result.ok).toBe(true);
    expect(result.run.stdout).toContain("still-good");
    const log = await Bun.file(join(repo.clone, result.log.log)).text();
    expect(log).toMatch(/\[config\] .*not valid YAML/);
    expect(lastLine(log)).toBe("[done] ok=true exitCode=0");
  });

  test("the working directory's config file is re-read on every POST", async () => {
    const cwd = tempDir();
    const repo = makeRepo();
    writeFileSync(join(cwd, "service.yaml"), `repoPath: ${repo.clone}\nrunScript: echo first-edit\n`);
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET });
    expect(await deploy(server.url)).toContain("first-edit");
    writeFileSync(join(cwd, "service.yaml"), `repoPath: ${repo.clone}\nrunScript: echo second-edit\npath: /moved\n`);
    expect((await post(server.url, { secret: SECRET })).status).toBe(404);
    expect(await deploy(`${server.url}/moved`)).toContain("second-edit");
  });
});

describe("config reload: a working-directory config file that became invalid", () => {
  test("keeps the last good values and says so in the stream and the logs", async () => {
    const cwd = tempDir();
    const repo = makeRepo();
    writeFileSync(join(cwd, "service.yaml"), `repoPath: ${repo.clone}\nrunScript: echo last-good\n`);
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET });
    expect(await deploy(server.url)).toContain("last-good");
    writeFileSync(join(cwd, "service.yaml"), `repoPath: ${repo.clone}\nrunScript: [half saved\n`);
    for (let i = 0; i < 2; i++) {
      const result = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
      expect(result.run.stdout).toBe("last-good\n");
      const log = await Bun.file(join(cwd, result.log.log)).text();
      expect(log).toMatch(/\[config\] .*service\.yaml is not valid YAML.*keeping the last good configuration/);
    }
    const text = await deploy(server.url);
    expect(text).toMatch(/\[config\] .*not valid YAML/);
  });

  test("an apps list with several wrong keys: one [config] line names each of them, and the last good values deploy", async () => {
    const cwd = tempDir();
    const repo = makeRepo();
    writeFileSync(join(cwd, "service.yaml"), `repoPath: ${repo.clone}\nrunScript: echo last-good\n`);
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET });
    writeFileSync(
      join(cwd, "service.yaml"),
      ["apps:", "  - name: web", "    hots: a.example.com", "    path: hook", ""].join("\n"),
    );
    const text = await deploy(server.url);
    expect(text).toContain("last-good");
    const configLines = text.split("\n").filter((line) => line.startsWith("[config]"));
    expect(configLines).toHaveLength(1);
    expect(configLines[0]).toContain('key "hots" is not allowed in an app');
    expect(configLines[0]).toContain('key "path": expected a URL path');
    expect(configLines[0]).toContain("keeping the last good configuration");
  });
});

/** Bytes the process has read through read(2) and friends so far (Linux /proc/<pid>/io). */
function bytesRead(pid: number): number {
  return Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))![1]);
}

describe("config reload: the file is read again only when it changed", () => {
  test.skipIf(!existsSync("/proc/self/io"))(
    "unauthorized POSTs do not read an unchanged config file again (inode, size and mtime decide)",
    async () => {
      const cwd = tempDir();
      const file = join(cwd, "service.yaml");
      // A large file (still under the 1 MiB limit), written a while ago.
      writeFileSync(file, `runScript: echo big\n# ${"x".repeat(900 * 1024)}\n`);
      const past = new Date(Date.now() - 60_000);
      utimesSync(file, past, past);
      await using server = await startServer(cwd, { SERVICE_SECRET: SECRET });
      // Under the failed-authentication burst, so every one is still answered 401 and not throttled.
      const posts = FAILURE_BURST - 2;
      // The first request may read it once (the server has not read it since its start).
      expect((await post(server.url, { secret: "wrong" })).status).toBe(401);
      const before = bytesRead(server.proc.pid);
      for (let i = 0; i < posts; i++) expect((await post(server.url, { secret: "wrong" })).status).toBe(401);
      const read = bytesRead(server.proc.pid) - before;
      expect(read).toBeLessThan(900 * 1024);
    },
  );

  test("an edit with the same size within the same second is still picked up, and so is one that restores the mtime", async () => {
    const cwd = tempDir();
    const repo = makeRepo();
    const file = join(cwd, "service.yaml");
    writeFileSync(file, `repoPath: ${repo.clone}\nrunScript: echo edit-a\n`);
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET });
    expect(await deploy(server.url)).toContain("edit-a");
    writeFileSync(file, `repoPath: ${repo.clone}\nrunScript: echo edit-b\n`);
    expect(await deploy(server.url)).toContain("edit-b");
    const past = new Date(Date.now() - 60_000);
    utimesSync(file, past, past);
    expect(await deploy(server.url)).toContain("edit-b");
    writeFileSync(file, `repoPath: ${repo.clone}\nrunScript: echo edit-c\n`);
    utimesSync(file, past, past);
    expect(await deploy(server.url)).toContain("edit-c");
  });

  test("a config file that grows over 1 MiB keeps the last good configuration and says why", async () => {
    const cwd = tempDir();
    const repo = makeRepo();
    const file = join(cwd, "service.yaml");
    writeFileSync(file, `repoPath: ${repo.clone}\nrunScript: echo last-good\n`);
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET });
    writeFileSync(file, `repoPath: ${repo.clone}\nrunScript: echo too-big\n# ${"x".repeat(1024 * 1024)}\n`);
    const text = await deploy(server.url);
    expect(text).toContain("last-good");
    expect(text).toMatch(
      /\[config\] .*service\.yaml is \d+ bytes; a config file may be at most 1 MiB \(1048576 bytes\).*keeping the last good configuration/,
    );
  });
});
