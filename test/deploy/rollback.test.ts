import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { lastLine, makeRepo, post, readJson, runCli, SECRET, startServer, tempDir } from "../_support/helpers.ts";
import { pushWithout } from "../_support/push-without.ts";

/** The repository's own config: the deploy succeeds only while the file `healthy` is in the checkout. */
const REPO_CONFIG = "runScript: test -f healthy\n";

async function deployJson(url: string) {
  return (await post(`${url}/?format=json`, { secret: SECRET })).json();
}

describe('rollback (docs/deploy-control.md "Rollback")', () => {
  test("with rollbackOnFailure, a failed run resets to the pre-pull commit and runs the script again; ok when that redeploy succeeds", async () => {
    const repo = makeRepo({ "service.yaml": REPO_CONFIG, healthy: "yes\n" });
    const good = repo.head();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_ROLLBACK_ON_FAILURE: "true" });
    const broken = pushWithout(repo, "healthy");
    const res = await post(server.url, { secret: SECRET });
    const text = await res.text();
    expect(text).toContain("[rollback]");
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    // The line before [done] says what is live, and that what the push brought is not.
    const lines = text.trimEnd().split("\n");
    expect(lines.at(-2)).toBe(`[rollback] done: ${good.slice(0, 12)} stays live; ${broken.slice(0, 12)} is not live`);
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
    expect(readJson(join(repo.clone, result.log.json)).result.rollback.to).toBe(good);
    expect(readFileSync(join(repo.clone, result.log.log), "utf8")).toContain("[rollback]");
  });

  test("when the rollback redeploy fails too, the deploy is not ok", async () => {
    const repo = makeRepo({ "service.yaml": "runScript: sh -c 'exit 3'\n" });
    const before = repo.head();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_ROLLBACK_ON_FAILURE: "1" });
    const after = repo.push({ "x.txt": "x\n" }, "another failing commit");
    const result = await deployJson(server.url);
    expect(result.ok).toBe(false);
    expect(result.rollback).toMatchObject({ to: before, from: after, ok: false, exitCode: 3 });
    expect(repo.head()).toBe(before);
  });

  test("rollback is opt-in: by default a failed deploy stays at the new commit", async () => {
    const repo = makeRepo({ "service.yaml": REPO_CONFIG, healthy: "yes\n" });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
    const broken = pushWithout(repo, "healthy");
    const result = await deployJson(server.url);
    expect(result.ok).toBe(false);
    expect(result.rollback).toBeUndefined();
    expect(repo.head()).toBe(broken);
  });

  test("a run that times out is rolled back like a failed one", async () => {
    const repo = makeRepo({ "service.yaml": "runScript: test -f healthy\nrunTimeoutMs: 60000\n", healthy: "yes\n" });
    const good = repo.head();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_ROLLBACK_ON_FAILURE: "true" });
    pushWithout(
      repo,
      "healthy",
      { "service.yaml": "runScript: |\n  test -f healthy || sleep 60\nrunTimeoutMs: 800\n" },
      "hangs",
    );
    const result = await deployJson(server.url);
    expect(result.run.timedOut).toBe(true);
    expect(result.rollback).toMatchObject({ to: good, ok: true, exitCode: 0 });
    expect(result.ok).toBe(true);
  });

  test("without a commit from before the pull the rollback is skipped with a clear message", async () => {
    const cwd = tempDir();
    const plain = join(cwd, "not-a-repo");
    mkdirSync(plain);
    await using server = await startServer(cwd, {
      SERVICE_SECRET: SECRET,
      SERVICE_REPO_PATH: plain,
      SERVICE_RUN_SCRIPT: "false",
      SERVICE_ROLLBACK_ON_FAILURE: "true",
    });
    const text = await (await post(server.url, { secret: SECRET })).text();
    expect(text).toContain("[rollback] skipped");
    expect(lastLine(text)).toBe("[done] ok=false exitCode=1");
  });

  test("a rolled-back deploy is not a success in the history: rolledBack: true in the result and the record, `rolled back` in service logs, listed by --failed with every failed run or pull", async () => {
    const repo = makeRepo({ "service.yaml": REPO_CONFIG, healthy: "yes\n" });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_ROLLBACK_ON_FAILURE: "true" });
    const fine = await deployJson(server.url);
    expect(fine).toMatchObject({ ok: true, rolledBack: false });
    pushWithout(repo, "healthy");
    const rolled = await deployJson(server.url);
    // The spec's ok stays: the redeploy of the previous commit succeeded.
    expect(rolled).toMatchObject({ ok: true, rolledBack: true, rollback: { ok: true } });
    const record = readJson(join(repo.clone, rolled.log.json));
    expect(record.result.rolledBack).toBe(true);
    // A failed run whose rollback fails too: the checkout is moved to the broken commit by hand first.
    Bun.spawnSync(["git", "pull", "-q"], { cwd: repo.clone });
    repo.push({ "x.txt": "x\n" }, "still without healthy");
    const failed = await deployJson(server.url);
    expect(failed).toMatchObject({ ok: false, rolledBack: true, rollback: { ok: false } });

    const table = (await runCli(["logs"], { cwd: repo.clone })).stdout.split("\n");
    const row = (id: string) => table.find((line) => line.includes(id.slice(0, 8)))!;
    expect(row(rolled.id)).toMatch(/\brolled back\b/);
    expect(row(rolled.id)).not.toMatch(/\bok\b/);
    expect(row(failed.id)).toContain("FAILED");
    expect(row(fine.id)).toMatch(/\bok\b/);

    const failedOnly = (await runCli(["logs", "--failed"], { cwd: repo.clone })).stdout;
    expect(failedOnly).toContain(rolled.id.slice(0, 8));
    expect(failedOnly).toContain(failed.id.slice(0, 8));
    expect(failedOnly).not.toContain(fine.id.slice(0, 8));

    const listed = JSON.parse((await runCli(["logs", "--json"], { cwd: repo.clone })).stdout);
    const entry = (id: string) => listed.find((e: { id: string }) => e.id === id);
    expect(entry(rolled.id)).toMatchObject({ ok: true, rolledBack: true });
    expect(entry(fine.id)).toMatchObject({ ok: true, rolledBack: false });
    const failedJson = JSON.parse((await runCli(["logs", "--failed", "--json"], { cwd: repo.clone })).stdout);
    expect(failedJson.map((e: { id: string }) => e.id).sort()).toEqual([rolled.id, failed.id].sort());
  });

  test("a deploy whose run failed and was rolled back is listed by --failed, although its redeploy succeeded and ok is true", async () => {
    // The script fails the first time it runs in this checkout, and succeeds after (its marker is untracked: the reset keeps it).
    const repo = makeRepo({ "service.yaml": "runScript: sh -c 'test -f ran || { touch ran; exit 1; }'\n" });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_ROLLBACK_ON_FAILURE: "true" });
    repo.push({ "x.txt": "x\n" }, "a commit to roll back from");
    const result = await deployJson(server.url);
    expect(result).toMatchObject({
      ok: true,
      rolledBack: true,
      pull: { success: true },
      run: { exitCode: 1 },
      rollback: { ok: true },
    });
    const failedOnly = (await runCli(["logs", "--failed"], { cwd: repo.clone })).stdout;
    expect(failedOnly).toContain(result.id.slice(0, 8));
    expect(failedOnly).toContain("rolled back");
  });

  test("the CI one-liners of docs/forges.md (stream and JSON) fail for a rolled-back deploy and pass for a good one", async () => {
    const readme = readFileSync(join(import.meta.dir, "..", "..", "docs", "forges.md"), "utf8");
    const line = /^ci_deploy\(\) \{.*$/m.exec(readme)?.[0];
    expect(line).toBeDefined();
    const jsonLine = /`(curl [^`]*\| jq -e [^`]*)`/.exec(readme)?.[1];
    expect(jsonLine).toBeDefined();
    const repo = makeRepo({ "service.yaml": REPO_CONFIG, healthy: "yes\n" });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_ROLLBACK_ON_FAILURE: "true" });
    const sh = (script: string) =>
      Bun.spawn(["sh", "-c", script], {
        env: { ...process.env, SECRET, URL: server.url },
        stdout: "pipe",
        stderr: "pipe",
      }).exited;
    const ci = () => sh(`${line}\nci_deploy "$URL"`);
    const ciJson = () => sh(jsonLine!.replace("https://deploy.example.com/", `${server.url}/`));
    expect(await ci()).toBe(0);
    expect(await ciJson()).toBe(0);
    pushWithout(repo, "healthy");
    expect(await ci()).not.toBe(0);
    expect(await ciJson()).not.toBe(0);
  });
});
