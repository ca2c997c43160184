import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { lastLine, makeRepo, post, readJson, SECRET, startServer, tempDir } from "./helpers.ts";

/** The repository's own config: the deploy succeeds only while the file `healthy` is in the checkout. */
const REPO_CONFIG = "runScript: test -f healthy\n";

async function deployJson(url: string) {
  return (await post(`${url}/?format=json`, { secret: SECRET })).json();
}

describe("rollback (SPEC rules 2-3)", () => {
  test("with rollbackOnFailure, a failed run resets to the pre-pull commit and runs the script again; ok when that redeploy succeeds", async () => {
    const repo = makeRepo({ "service.yaml": REPO_CONFIG, healthy: "yes\n" });
    const good = repo.head();
    const server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_ROLLBACK_ON_FAILURE: "true" });
    try {
      Bun.spawnSync(["git", "rm", "-q", "healthy"], { cwd: join(repo.dir, "pusher") });
      const broken = repo.push({}, "removes healthy");
      const res = await post(server.url, { secret: SECRET });
      const text = await res.text();
      expect(text).toContain("[rollback]");
      expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
      expect(repo.head()).toBe(good);

      // The same again, as JSON: the rollback object says what happened.
      Bun.spawnSync(["git", "pull", "-q"], { cwd: repo.clone });
      expect(repo.head()).toBe(broken);
      Bun.spawnSync(["git", "reset", "-q", "--hard", good], { cwd: repo.clone });
      const result = await deployJson(server.url);
      expect(result.ok).toBe(true);
      expect(result.run.exitCode).toBe(1);
      expect(result.rollback).toMatchObject({ to: good, from: broken, ok: true, exitCode: 0 });
      expect(typeof result.rollback.stdout).toBe("string");
      expect(readJson(result.log.json).result.rollback.to).toBe(good);
      expect(readFileSync(result.log.log, "utf8")).toContain("[rollback]");
    } finally {
      await server.stop();
    }
  });

  test("when the rollback redeploy fails too, the deploy is not ok", async () => {
    const repo = makeRepo({ "service.yaml": "runScript: sh -c 'exit 3'\n" });
    const before = repo.head();
    const server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_ROLLBACK_ON_FAILURE: "1" });
    try {
      const after = repo.push({ "x.txt": "x\n" }, "another failing commit");
      const result = await deployJson(server.url);
      expect(result.ok).toBe(false);
      expect(result.rollback).toMatchObject({ to: before, from: after, ok: false, exitCode: 3 });
      expect(repo.head()).toBe(before);
    } finally {
      await server.stop();
    }
  });

  test("rollback is opt-in: by default a failed deploy stays at the new commit", async () => {
    const repo = makeRepo({ "service.yaml": REPO_CONFIG, healthy: "yes\n" });
    const server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
    try {
      Bun.spawnSync(["git", "rm", "-q", "healthy"], { cwd: join(repo.dir, "pusher") });
      const broken = repo.push({}, "removes healthy");
      const result = await deployJson(server.url);
      expect(result.ok).toBe(false);
      expect(result.rollback).toBeUndefined();
      expect(repo.head()).toBe(broken);
    } finally {
      await server.stop();
    }
  });

  test("a run that times out is rolled back like a failed one", async () => {
    const repo = makeRepo({ "service.yaml": "runScript: test -f healthy\nrunTimeoutMs: 60000\n", healthy: "yes\n" });
    const good = repo.head();
    const server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_ROLLBACK_ON_FAILURE: "true" });
    try {
      Bun.spawnSync(["git", "rm", "-q", "healthy"], { cwd: join(repo.dir, "pusher") });
      repo.push({ "service.yaml": "runScript: |\n  test -f healthy || sleep 60\nrunTimeoutMs: 800\n" }, "hangs");
      const result = await deployJson(server.url);
      expect(result.run.timedOut).toBe(true);
      expect(result.rollback).toMatchObject({ to: good, ok: true, exitCode: 0 });
      expect(result.ok).toBe(true);
    } finally {
      await server.stop();
    }
  });

  test("without a commit from before the pull the rollback is skipped with a clear message", async () => {
    const cwd = tempDir();
    const plain = join(cwd, "not-a-repo");
    mkdirSync(plain);
    const server = await startServer(cwd, { SERVICE_SECRET: SECRET, SERVICE_REPO_PATH: plain, SERVICE_RUN_SCRIPT: "false", SERVICE_ROLLBACK_ON_FAILURE: "true" });
    try {
      const text = await (await post(server.url, { secret: SECRET })).text();
      expect(text).toContain("[rollback] skipped");
      expect(lastLine(text)).toBe("[done] ok=false exitCode=1");
    } finally {
      await server.stop();
    }
  });
});
