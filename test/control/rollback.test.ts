import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createServiceServer } from "../../src/index.ts";
import { makeGate } from "../_support/gate.ts";
import {
  baseEnv,
  CLI,
  lastLine,
  logFiles,
  makeRepo,
  readJson,
  runCli,
  tempDir,
  waitFor,
  defer,
} from "../_support/helpers.ts";

const ENV = { SERVICE_RUN_SCRIPT: "true" };

/** Runs the CLI in `cwd`; the id of the deploy it printed, and that deploy's record. */
async function cli(cwd: string, args: string[], env: Record<string, string> = {}) {
  const out = await runCli(args, { cwd, env: { ...ENV, ...env } });
  const id = /^\[deploy\] ([0-9a-f-]{36}) started/m.exec(out.stdout)?.[1];
  const json = id && logFiles(cwd).find((name) => name.endsWith(`_${id}.json`));
  return { ...out, id, record: json ? readJson(join(cwd, ".service", "logs", json)) : undefined };
}

/** A clone deployed twice: at `first`, then at `second` (HEAD). */
async function deployedTwice() {
  const repo = makeRepo();
  const first = repo.head();
  const one = await cli(repo.clone, ["deploy"]);
  const second = repo.push({ "v2.txt": "2\n" }, "v2");
  const two = await cli(repo.clone, ["deploy"]);
  expect([one.code, two.code, repo.head()]).toEqual([0, 0, second]);
  return { repo, first, second, firstId: one.id!, secondId: two.id! };
}

describe("service rollback", () => {
  test("without a target: resets to the commit of the newest ok deploy other than HEAD, runs the script, records trigger rollback", async () => {
    const { repo, first, firstId } = await deployedTwice();
    const { code, stdout, record } = await cli(repo.clone, ["rollback"]);
    expect(code).toBe(0);
    expect(repo.head()).toBe(first);
    expect(stdout).toContain("(rollback) in");
    expect(stdout).toContain(`[pull] rollback: git reset --hard ${first.slice(0, 12)}`);
    expect(lastLine(stdout)).toBe("[done] ok=true exitCode=0");
    expect(record.trigger).toBe("rollback");
    expect(record.result.target).toMatchObject({ commit: first, deployId: firstId });
    expect(record.result.pull.after).toBe(first);
    const logs = await runCli(["logs"], { cwd: repo.clone });
    expect(logs.stdout.split("\n")[1]).toMatch(/ rollback .* ok /);
  });

  test("a rollback's record is a target like any deploy's: rolling back again returns to the newer commit", async () => {
    const { repo, second, secondId } = await deployedTwice();
    const back = await cli(repo.clone, ["rollback"]);
    expect(back.code).toBe(0);
    const forward = await cli(repo.clone, ["rollback"]);
    expect(forward.code).toBe(0);
    expect(repo.head()).toBe(second);
    expect(forward.record.result.target).toMatchObject({ commit: second, deployId: secondId });
    // And by the rollback's own id: the commit it left checked out.
    const again = await cli(repo.clone, ["rollback", back.id!.slice(0, 8)]);
    expect(again.record.result.target.deployId).toBe(back.id);
    expect(again.record.result.target.commit).toBe(back.record.result.pull.after);
  });

  test("the next deploy pulls forward again from the rolled-back commit", async () => {
    const { repo, first, second } = await deployedTwice();
    expect((await cli(repo.clone, ["rollback"])).code).toBe(0);
    expect(repo.head()).toBe(first);
    const next = await cli(repo.clone, ["deploy"]);
    expect(next.code).toBe(0);
    expect(repo.head()).toBe(second);
    expect(next.record.result.pull).toMatchObject({ before: first, after: second });
  });

  test("<id>, an id prefix, and last-ok take the commit that deploy left checked out", async () => {
    const { repo, first, second, firstId } = await deployedTwice();
    const byPrefix = await cli(repo.clone, ["rollback", firstId.slice(0, 6)]);
    expect(byPrefix.code).toBe(0);
    expect(repo.head()).toBe(first);
    // A failed deploy of the second commit leaves it checked out: last-ok (the rollback just made) takes the first.
    expect((await cli(repo.clone, ["deploy"], { SERVICE_RUN_SCRIPT: "false" })).code).toBe(1);
    expect(repo.head()).toBe(second);
    const lastOk = await cli(repo.clone, ["rollback", "last-ok"]);
    expect(lastOk.code).toBe(0);
    expect(lastOk.record.result.target).toMatchObject({ commit: first, deployId: byPrefix.id });
    const byId = await cli(repo.clone, ["rollback", firstId]);
    expect(byId.record.result.target.commit).toBe(first);
    expect(second).not.toBe(first);
  });

  test("last-ok when the newest ok deploy is live: already live, nothing recorded, exit 0", async () => {
    const { repo, second, secondId } = await deployedTwice();
    const before = logFiles(repo.clone);
    const { code, stdout, stderr, id } = await cli(repo.clone, ["rollback", "last-ok"]);
    expect({ code, id }).toEqual({ code: 0, id: undefined });
    expect(stderr).not.toContain("[error]");
    expect(stdout).toBe(
      `already live: nothing to roll back (the newest ok deploy, ${secondId.slice(0, 8)}, left ${second.slice(0, 12)}, which is live)\n`,
    );
    expect(logFiles(repo.clone)).toEqual(before);
    expect(repo.head()).toBe(second);
  });

  test("<commit>: any commit of the repository, by hash or prefix; deployId is null", async () => {
    const { repo, first } = await deployedTwice();
    const { code, record } = await cli(repo.clone, ["rollback", first.slice(0, 10)]);
    expect(code).toBe(0);
    expect(repo.head()).toBe(first);
    expect(record.result.target).toMatchObject({ commit: first, deployId: null });
  });

  test("a commit not in the repository: one line, exit 1, nothing queued", async () => {
    const { repo, second } = await deployedTwice();
    const before = logFiles(repo.clone);
    for (const ref of ["0123456789abcdef0123456789abcdef01234567", "no-such-branch", "ffffff"]) {
      const { code, stdout, stderr } = await cli(repo.clone, ["rollback", ref]);
      expect(code).toBe(1);
      expect(stdout).toBe("");
      const lines = stderr
        .trim()
        .split("\n")
        .filter((line) => !line.startsWith("config:"));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`"${ref}" is neither a deploy id nor a commit`);
    }
    expect(logFiles(repo.clone)).toEqual(before);
    expect(repo.head()).toBe(second);
  });

  test("nothing to go back to: one line, exit 1", async () => {
    const repo = makeRepo();
    const { code, stderr } = await cli(repo.clone, ["rollback"]);
    expect(code).toBe(1);
    expect(stderr).toContain("no earlier ok deploy");
  });

  test("exits 1 when the rolled-back deploy fails: its run script, or its health check", async () => {
    const { repo } = await deployedTwice();
    const failing = await cli(repo.clone, ["rollback"], { SERVICE_RUN_SCRIPT: "false" });
    expect(failing.code).toBe(1);
    expect(failing.record.result.ok).toBe(false);
    const unhealthy = await cli(repo.clone, ["rollback", "last-ok"], {
      SERVICE_HEALTH_CHECK: "false",
      SERVICE_HEALTH_CHECK_TIMEOUT_MS: "200",
      SERVICE_HEALTH_CHECK_INTERVAL_MS: "100",
    });
    expect(unhealthy.code).toBe(1);
    expect(unhealthy.record.result.healthCheck.ok).toBe(false);
  });

  test("a rollback waits in the repository's queue behind a running deploy, then runs (trigger rollback)", async () => {
    const { repo, first } = await deployedTwice();
    const gate = makeGate();
    const env = baseEnv({ SERVICE_RUN_SCRIPT: gate.script, ...gate.env });
    const running = Bun.spawn([...CLI, "deploy"], { cwd: repo.clone, env, stdout: "ignore", stderr: "ignore" });
    using _runningKilled = defer(() => running.kill("SIGKILL"));
    await waitFor(() => gate.starts().length === 1, "the deploy to start");
    const rollback = Bun.spawn([...CLI, "rollback", first], { cwd: repo.clone, env, stdout: "pipe", stderr: "ignore" });
    using _rollbackKilled = defer(() => rollback.kill("SIGKILL"));
    const rollbackOut = new Response(rollback.stdout).text();
    // The rollback waits: its status shows one waiting behind the running deploy.
    await waitFor(
      async () => JSON.parse((await runCli(["status", "--json"], { cwd: repo.clone })).stdout)[0].waiting === 1,
      "the rollback to wait",
    );
    expect(gate.lines()).toHaveLength(1);
    gate.open();
    expect([await running.exited, await rollback.exited]).toEqual([0, 0]);
    expect(await rollbackOut).toContain("[queued] waiting; position=1");
    expect(gate.lines().map((line) => line.split(" ")[0])).toEqual(["start", "end", "start", "end"]);
    expect(gate.lines()[2]).toEndWith(" rollback");
    expect(repo.head()).toBe(first);
  });

  test("--cwd: from a shell elsewhere, in the service's directory", async () => {
    const { repo, first } = await deployedTwice();
    const { code } = await cli(tempDir(), ["rollback", "--cwd", repo.clone]);
    expect(code).toBe(0);
    expect(repo.head()).toBe(first);
  });

  test("library: server.rollback(target?, {app?}) deploys through the server's queue and logs", async () => {
    const { repo, first, firstId } = await deployedTwice();
    const server = createServiceServer({ runScript: "true", secret: "library-secret-0123456789" }, { cwd: repo.clone });
    const result = await server.rollback();
    expect(result.ok).toBe(true);
    expect(result.target).toMatchObject({ sha: first, commit: first, deployId: firstId });
    expect(repo.head()).toBe(first);
    await expect(server.rollback("not-a-commit")).rejects.toThrow("is neither a deploy id nor a commit");
  });
});
