/**
 * The service's files under `.service/` are never written through a symbolic link planted at their names: the
 * .log is created exclusively, temp files have unpredictable names, recovery and retention do not follow links,
 * and `.service/` and `.service/logs/` are private to the service's user (mode 0700).
 */
import { describe, expect, test } from "bun:test";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  watch,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { createConsola, LogLevels } from "consola";
import { Deployer } from "../../src/deploy/deployer.ts";
import type { DeployResult } from "../../src/types.ts";
import { DeployLog } from "../../src/history/log.ts";
import { logStem } from "../../src/history/record.ts";
import { pruneLogs } from "../../src/history/retention.ts";
import { makeLocalRepo, readJson, runCli, SECRET, startServer, tempDir } from "../_support/helpers.ts";
import { deployIdOf, logDirOf, runningRecordAlone, stemDate, stems } from "../_support/ops-helpers.ts";

const PRECIOUS = "precious, not the service's\n";

/** A file the service must never write: a link to it is planted where the service writes. */
function victim(dir: string, name = "victim"): string {
  const file = join(dir, name);
  writeFileSync(file, PRECIOUS);
  return file;
}

/** A logger that keeps what it is told, and says nothing. */
function capturingLogger(): { logger: ReturnType<typeof createConsola>; said: string[] } {
  const said: string[] = [];
  const logger = createConsola({
    level: LogLevels.debug,
    reporters: [{ log: (entry) => said.push(entry.args.join(" ")) }],
  });
  return { logger, said };
}

/** A pid that no process has now: a child that already exited. */
function deadPid(): number {
  const child = Bun.spawnSync(["true"]);
  return child.pid;
}

function resultOf(id: string, startedAt: Date): DeployResult {
  return {
    id,
    ok: true,
    pull: { success: true, stdout: "", stderr: "", before: null, after: null },
    run: { stdout: "hello\n", stderr: "", exitCode: 0, timedOut: false, script: "true" },
    error: null,
    log: { id, json: "", log: "" },
    startedAt: startedAt.toISOString(),
    finishedAt: startedAt.toISOString(),
    durationMs: 0,
    rolledBack: false,
    actor: "cli:test",
    commit: null,
    previousCommit: null,
  };
}

describe("log files and symbolic links", () => {
  test(".service and .service/logs are created with mode 0700", async () => {
    const repo = makeLocalRepo();
    const run = await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "true" } });
    expect(run.code).toBe(0);
    expect(statSync(join(repo, ".service")).mode & 0o777).toBe(0o700);
    expect(statSync(logDirOf(repo)).mode & 0o777).toBe(0o700);
  });

  test("a link planted at a deploy's .log or at the old temp name is not followed: the targets stay untouched", () => {
    const cwd = tempDir();
    const dir = logDirOf(cwd);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const id = crypto.randomUUID();
    const startedAt = new Date();
    const stem = logStem(startedAt, id);
    const logTarget = victim(cwd, "log-victim");
    const tempTarget = victim(cwd, "temp-victim");
    symlinkSync(logTarget, join(dir, `${stem}.log`));
    symlinkSync(tempTarget, join(dir, `${stem}.json.tmp`));

    const log = new DeployLog(cwd, { id, startedAt, trigger: "cli", repoPath: cwd, runScript: "true" });
    log.write({ type: "step", step: "deploy", text: "hello" });
    log.finish(resultOf(id, startedAt));

    expect(readFileSync(logTarget, "utf8")).toBe(PRECIOUS);
    expect(readFileSync(tempTarget, "utf8")).toBe(PRECIOUS);
    expect(log.problem).toContain("EEXIST");
    expect(log.takeNotice()).toContain(`cannot create the deploy log`);
    // The record itself is a file of its own, finished.
    expect(lstatSync(join(dir, `${stem}.json`)).isFile()).toBe(true);
    expect(readJson(join(dir, `${stem}.json`)).status).toBe("done");
  });

  test("recovery marks a dead deploy interrupted without writing through links at its .log or temp name", async () => {
    const repo = makeLocalRepo();
    const dir = logDirOf(repo);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const id = crypto.randomUUID();
    const startedAt = new Date(Date.now() - 3_600_000);
    const stem = logStem(startedAt, id);
    const record = {
      status: "running",
      id,
      trigger: "webhook",
      repoPath: repo,
      runScript: "true",
      startedAt: startedAt.toISOString(),
      pid: deadPid(),
      pidStart: "1",
    };
    writeFileSync(join(dir, `${stem}.json`), JSON.stringify(record));
    const logTarget = victim(repo, "log-victim");
    const tempTarget = victim(repo, "temp-victim");
    symlinkSync(logTarget, join(dir, `${stem}.log`));
    symlinkSync(tempTarget, join(dir, `${stem}.json.tmp`));

    await using server = await startServer(repo, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "true" });
    expect(server.stdout.text + server.stderr.text).toContain(`deploy ${id} was interrupted`);
    await server.stop();
    expect(readFileSync(logTarget, "utf8")).toBe(PRECIOUS);
    expect(readFileSync(tempTarget, "utf8")).toBe(PRECIOUS);
    expect(lstatSync(join(dir, `${stem}.json`)).isFile()).toBe(true);
    expect(readJson(join(dir, `${stem}.json`)).status).toBe("interrupted");
  });

  test("retention removes links, never their targets, and does not read a record through a link", async () => {
    const repo = makeLocalRepo();
    const dir = logDirOf(repo);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // The link's target says "running" by a live process: read through the link, retention would keep the stem.
    const target = join(repo, "record-victim.json");
    const live = JSON.stringify({ status: "running", id: "x", pid: process.pid, startedAt: new Date().toISOString() });
    writeFileSync(target, live);
    const logTarget = victim(repo, "log-victim");
    const old = `${stemDate(new Date(Date.now() - 86_400_000))}_${crypto.randomUUID()}`;
    symlinkSync(target, join(dir, `${old}.json`));
    symlinkSync(logTarget, join(dir, `${old}.log`));

    const run = await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "true", SERVICE_KEEP_DEPLOYS: "1" } });
    expect(run.code).toBe(0);
    expect(stems(repo)).toEqual([expect.stringContaining(deployIdOf(run.stdout))]);
    expect(readFileSync(target, "utf8")).toBe(live);
    expect(readFileSync(logTarget, "utf8")).toBe(PRECIOUS);
    expect(existsSync(join(dir, `${old}.json`))).toBe(false);
    expect(readdirSync(dir).some((n) => n.endsWith(".tmp"))).toBe(false);
  });

  test("temp files left by a writer that is gone are removed by the next retention; a live writer's stay", async () => {
    const repo = makeLocalRepo();
    const dir = logDirOf(repo);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stem = `${stemDate(new Date())}_${crypto.randomUUID()}`;
    const dead = `${stem}.json.${deadPid()}.0123456789abcdef.tmp`;
    const old = `${stem}.json.tmp`;
    const live = `${stem}.json.${process.pid}.fedcba9876543210.tmp`;
    for (const name of [dead, old, live]) writeFileSync(join(dir, name), "");
    expect((await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "true" } })).code).toBe(0);
    const left = readdirSync(dir);
    expect(left).not.toContain(dead);
    expect(left).not.toContain(old);
    expect(left).toContain(live);
  });
});

describe("one logger", () => {
  test("a log problem is said through the injected logger, not the service's own output", () => {
    const cwd = tempDir();
    // A file where the log directory should be: the log cannot be created.
    mkdirSync(join(cwd, ".service"), { recursive: true });
    writeFileSync(join(cwd, ".service", "logs"), "not a directory\n");
    const { logger, said } = capturingLogger();
    const id = crypto.randomUUID();
    const log = new DeployLog(
      cwd,
      { id, startedAt: new Date(), trigger: "cli", repoPath: cwd, runScript: "true" },
      { logger },
    );
    expect(log.problem).toContain("cannot create the deploy log");
    expect(said.join("\n")).toContain(`deploy ${id}: cannot create the deploy log`);
  });

  test("a deploy whose log cannot be written warns through the deployer's logger", async () => {
    const repo = makeLocalRepo();
    mkdirSync(join(repo, ".service"), { recursive: true });
    writeFileSync(join(repo, ".service", "logs"), "not a directory\n");
    const { logger, said } = capturingLogger();
    const config = {
      repoPath: repo,
      runScript: "true",
      runTimeoutMs: 60_000,
      rollbackOnFailure: false,
      queueLimit: 5,
      keepDeploys: 50,
      keepDays: 30,
      maxLogBytes: 1024 * 1024,
    };
    const result = await new Deployer({ logger }).deploy({ config, trigger: "cli", cwd: repo });
    expect(result.ok).toBe(true);
    expect(said.join("\n")).toContain(`deploy ${result.id}: cannot create the deploy log`);
  });
});

describe("a deploy's two files appear in order", () => {
  /** The names `act` changed in `dir`, in order (inotify reports a directory's changes as they happened). */
  async function changesIn(dir: string, act: () => void, last: string): Promise<string[]> {
    const seen: string[] = [];
    const watcher = watch(dir, (_event, name) => {
      if (name) seen.push(String(name));
    });
    try {
      act();
      for (let i = 0; i < 100 && !seen.includes(last); i++) await Bun.sleep(10);
      return seen;
    } finally {
      watcher.close();
    }
  }

  /** A deploy's files in `cwd`, ended; its stem. */
  function endedDeploy(cwd: string, startedAt = new Date(), id = crypto.randomUUID()): string {
    const log = new DeployLog(cwd, { id, startedAt, trigger: "cli", repoPath: cwd, runScript: "true" });
    log.finish(resultOf(id, startedAt));
    return logStem(startedAt, id);
  }

  test("the running record is on disk before the .log: a reader never finds the .log alone", async () => {
    const cwd = tempDir();
    const dir = logDirOf(cwd);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const [startedAt, id] = [new Date(), crypto.randomUUID()];
    const stem = logStem(startedAt, id);
    const seen = await changesIn(dir, () => endedDeploy(cwd, startedAt, id), `${stem}.log`);
    const firstRecord = seen.indexOf(`${stem}.json`);
    expect(firstRecord).toBeGreaterThanOrEqual(0);
    expect(seen.indexOf(`${stem}.log`)).toBeGreaterThan(firstRecord);
  });

  test("retention removes the .log before the record: a reader never finds the .log alone", async () => {
    const cwd = tempDir();
    const older = endedDeploy(cwd, new Date(Date.now() - 60_000));
    endedDeploy(cwd);
    const seen = await changesIn(logDirOf(cwd), () => pruneLogs(cwd, 1, 0), `${older}.json`);
    expect(stems(cwd)).not.toContain(older);
    const log = seen.indexOf(`${older}.log`);
    expect(log).toBeGreaterThanOrEqual(0);
    expect(seen.indexOf(`${older}.json`)).toBeGreaterThan(log);
  });

  test("a running record whose .log is not created yet is listed as running, with no problem", async () => {
    const cwd = tempDir();
    const id = runningRecordAlone(cwd, process.pid);
    const listed = await runCli(["logs", "--json"], { cwd });
    expect(listed.code).toBe(0);
    const [entry] = JSON.parse(listed.stdout);
    expect(entry).toMatchObject({ id, status: "running" });
    expect(entry.problem).toBeUndefined();
    // Its log so far is nothing, not an error.
    const shown = await runCli(["logs", id.slice(0, 8)], { cwd });
    expect(shown).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });
});
