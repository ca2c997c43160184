/**
 * Retention (docs/log-files.md "Log files"): after each deploy the files of the newest `keepDeploys` deploys are kept
 * (and, with `keepDays`, only those of the last N days); a running deploy's files are never removed; one
 * deploy's .log is capped at `maxLogBytes` with a truncation mark while the live stream carries everything.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeGate } from "../_support/gate.ts";
import {
  lastLine,
  logFiles,
  makeLocalRepo,
  makeRepo,
  post,
  readJson,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
  defer,
} from "../_support/helpers.ts";
import { StreamReader } from "../_support/gate.ts";
import { copyPair, deployIdOf, logDirOf, stemDate, stemOf, stems } from "../_support/ops-helpers.ts";
import { pruneLogs } from "../../src/history/retention.ts";

const idOfStem = (stem: string) => stem.slice(stem.lastIndexOf("_") + 1);

/** How many bytes of the script's x-output a text holds (runs of x, not the x of "exit"). */
const xs = (text: string) => (text.match(/x{20,}/g) ?? []).reduce((sum, run) => sum + run.length, 0);

describe("retention: keepDeploys", () => {
  test("SERVICE_KEEP_DEPLOYS=5 over 50 deploys: exactly the newest 5 pairs remain", async () => {
    const repo = makeLocalRepo();
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const run = await runCli(["deploy"], {
        cwd: repo,
        env: { SERVICE_RUN_SCRIPT: "true", SERVICE_KEEP_DEPLOYS: "5" },
      });
      expect(run.code).toBe(0);
      ids.push(deployIdOf(run.stdout));
      // Never more than 5 deploys on disk after a deploy ended.
      expect(stems(repo).length).toBeLessThanOrEqual(5);
    }
    const left = stems(repo);
    expect(left).toHaveLength(5);
    // Newest by start time: the last five deploys run (several start in the same second, so the name's
    // time alone would not tell them apart).
    expect(left.map(idOfStem).sort()).toEqual(ids.slice(-5).sort());
    for (const stem of left) {
      expect(existsSync(join(logDirOf(repo), `${stem}.json`))).toBe(true);
      expect(existsSync(join(logDirOf(repo), `${stem}.log`))).toBe(true);
    }
    // The newest by name are the same ones: nothing older than the fifth newest is left.
    const history = JSON.parse((await runCli(["logs", "--json"], { cwd: repo })).stdout);
    expect(history.map((e: any) => e.id)).toEqual(ids.slice(-5).reverse());
  }, 30_000);

  test("the default keeps every deploy of a small history; the keepDeploys key works from service.yaml too", async () => {
    const repo = makeLocalRepo();
    for (let i = 0; i < 3; i++)
      expect((await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "true" } })).code).toBe(0);
    expect(stems(repo)).toHaveLength(3);
    writeFileSync(join(repo, "service.yaml"), "runScript: 'true'\nkeep_deploys: 2\n");
    const run = await runCli(["deploy"], { cwd: repo });
    expect(run.code).toBe(0);
    const left = stems(repo);
    expect(left).toHaveLength(2);
    expect(left.map(idOfStem)).toContain(deployIdOf(run.stdout));
  });
});

describe("retention: keepDays", () => {
  test("pairs dated before SERVICE_KEEP_DAYS are removed after the next deploy; recent ones stay", async () => {
    const repo = makeLocalRepo();
    const first = await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "true" } });
    const real = stemOf(repo, deployIdOf(first.stdout));
    const day = 86_400_000;
    const ancient = copyPair(repo, real, `${stemDate(new Date("2020-01-02T03:04:05Z"))}_${crypto.randomUUID()}`);
    const tenDays = copyPair(repo, real, `${stemDate(new Date(Date.now() - 10 * day))}_${crypto.randomUUID()}`);
    const twoDays = copyPair(repo, real, `${stemDate(new Date(Date.now() - 2 * day))}_${crypto.randomUUID()}`);
    expect(stems(repo)).toHaveLength(4);

    const next = await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "true", SERVICE_KEEP_DAYS: "7" } });
    expect(next.code).toBe(0);
    const kept = stems(repo);
    expect(kept).not.toContain(ancient);
    expect(kept).not.toContain(tenDays);
    expect(kept).toContain(twoDays);
    expect(kept).toContain(real);
    expect(kept).toContain(stemOf(repo, deployIdOf(next.stdout)));
    expect(kept).toHaveLength(3);

    const tighter = await runCli(["deploy"], {
      cwd: repo,
      env: { SERVICE_RUN_SCRIPT: "true", SERVICE_KEEP_DAYS: "1" },
    });
    expect(tighter.code).toBe(0);
    expect(stems(repo)).not.toContain(twoDays);
    expect(stems(repo)).toHaveLength(3);
  });

  test("without keepDays old pairs are kept whatever their age", async () => {
    const repo = makeLocalRepo();
    const first = await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "true" } });
    const ancient = copyPair(
      repo,
      stemOf(repo, deployIdOf(first.stdout)),
      `${stemDate(new Date("2019-05-06T07:08:09Z"))}_${crypto.randomUUID()}`,
    );
    expect((await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "true" } })).code).toBe(0);
    expect(stems(repo)).toContain(ancient);
  });
});

describe("retention: a running deploy", () => {
  test("a running deploy's files survive a CLI deploy with keepDeploys=1 that finishes meanwhile", async () => {
    // One working directory (one log directory), two repositories: the CLI deploy is not queued behind the
    // gated one, so it finishes and prunes while the other still runs.
    const cwd = tempDir("service-retention-");
    const served = makeRepo();
    const other = makeLocalRepo();
    const gate = makeGate();
    const older = await runCli(["deploy"], { cwd, env: { SERVICE_REPO_PATH: other, SERVICE_RUN_SCRIPT: "true" } });
    expect(older.code).toBe(0);
    const olderStem = stemOf(cwd, deployIdOf(older.stdout));

    await using server = await startServer(cwd, {
      SERVICE_SECRET: SECRET,
      SERVICE_REPO_PATH: served.clone,
      SERVICE_RUN_SCRIPT: gate.script,
      ...gate.env,
    });
    using _gateOpened = defer(() => gate.open());
    const reader = new StreamReader(await post(server.url, { secret: SECRET }));
    const id = await waitFor(() => reader.id(), "the gated deploy's id");
    await waitFor(() => gate.starts().includes(id), "the gated deploy to run");
    const runningStem = stemOf(cwd, id);

    const cli = await runCli(["deploy"], {
      cwd,
      env: { SERVICE_REPO_PATH: other, SERVICE_RUN_SCRIPT: "true", SERVICE_KEEP_DEPLOYS: "1" },
    });
    expect(cli.code).toBe(0);
    const kept = stems(cwd);
    expect(kept).toContain(runningStem);
    expect(kept).toContain(stemOf(cwd, deployIdOf(cli.stdout)));
    expect(kept).not.toContain(olderStem);
    expect(readJson(join(logDirOf(cwd), `${runningStem}.json`)).status).toBe("running");
    expect(existsSync(join(logDirOf(cwd), `${runningStem}.log`))).toBe(true);

    gate.open();
    expect(lastLine(await reader.done)).toBe("[done] ok=true exitCode=0");
    // Its log was whole from start to end: nothing removed it half-way.
    const log = readFileSync(join(logDirOf(cwd), `${runningStem}.log`), "utf8");
    expect(log).toStartWith(`[deploy] ${id} started`);
    expect(lastLine(log)).toBe("[done] ok=true exitCode=0");
  }, 30_000);
});

describe("retention: maxLogBytes", () => {
  test("a script printing 1 MB with SERVICE_MAX_LOG_BYTES=10000: the .log is capped with a truncation mark and ends with [done]; the stream has all of it", async () => {
    const repo = makeRepo();
    const scripts = tempDir("service-scripts-");
    const script = join(scripts, "loud.sh");
    writeFileSync(script, "#!/bin/sh\nhead -c 1048576 /dev/zero | tr '\\0' x\necho\necho loud-end\n");
    chmodSync(script, 0o755);
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: script,
      SERVICE_MAX_LOG_BYTES: "10000",
    });
    const streamed = await (await post(server.url, { secret: SECRET })).text();
    expect(xs(streamed)).toBe(1_048_576);
    expect(streamed).toContain("loud-end\n");
    expect(streamed).not.toContain("[log] truncated");
    expect(lastLine(streamed)).toBe("[done] ok=true exitCode=0");

    const id = /\[deploy\] ([0-9a-f-]{36}) started/.exec(streamed)![1]!;
    const log = readFileSync(join(logDirOf(repo.clone), `${stemOf(repo.clone, id)}.log`), "utf8");
    expect(log).toContain("[log] truncated");
    expect(xs(log)).toBeLessThanOrEqual(10_000);
    expect(log.length).toBeLessThan(20_000);
    expect(log).toStartWith(`[deploy] ${id} started`);
    expect(lastLine(log)).toBe("[done] ok=true exitCode=0");
    // The service's own lines after the cap are still written.
    expect(log).toMatch(/\[run\] exit code 0 after/);
    const record = readJson(join(logDirOf(repo.clone), `${stemOf(repo.clone, id)}.json`));
    expect(record.status).toBe("done");
    expect(record.result.ok).toBe(true);
  }, 30_000);
});

describe("retention per app (multi-app mode)", () => {
  test("each app keeps its own newest keepDeploys: a busy app never removes another app's history", async () => {
    const web = makeRepo();
    const api = makeRepo();
    const cwd = tempDir();
    writeFileSync(
      join(cwd, "service.yaml"),
      [
        "apps:",
        `  - {name: web, host: web.example.com, path: /, repoPath: ${web.clone}, runScript: 'true', secret: web-secret-123456, keepDeploys: 2}`,
        `  - {name: api, host: api.example.com, path: /, repoPath: ${api.clone}, runScript: 'true', secret: api-secret-123456}`,
        "",
      ].join("\n"),
    );
    await using server = await startServer(cwd);
    const deploy = async (host: string, secret: string) => {
      const res = await fetch(server.url, { method: "POST", headers: { host, "x-service-secret": secret } });
      expect(lastLine(await res.text())).toBe("[done] ok=true exitCode=0");
    };
    for (let i = 0; i < 3; i++) await deploy("api.example.com", "api-secret-123456");
    for (let i = 0; i < 5; i++) await deploy("web.example.com", "web-secret-123456");
    // A record retention removes between the listing and its read is not on disk any more: left out.
    const appOf = (file: string): string[] => {
      try {
        return [readJson(join(cwd, ".service", "logs", file)).app];
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw error;
      }
    };
    const appsOnDisk = () =>
      logFiles(cwd)
        .filter((f) => f.endsWith(".json"))
        .flatMap(appOf);
    // Retention runs right after the `[done]` line (which never waits for it).
    await waitFor(() => appsOnDisk().filter((a) => a === "web").length === 2, "retention after the last deploy");
    const apps = appsOnDisk();
    expect(apps.filter((a) => a === "web")).toHaveLength(2);
    expect(apps.filter((a) => a === "api")).toHaveLength(3);
  });
});

describe("retention per app: the record's app, whatever the order of its keys", () => {
  test('hand-written records with `app` after other keys, and a nested or quoted "app" before it, are counted for their own app', () => {
    const cwd = tempDir();
    const dir = join(cwd, ".service", "logs");
    mkdirSync(dir, { recursive: true });
    const write = (second: number, app: string, decoy: string) => {
      const id = `0000000${second}-0000-4000-8000-000000000000`;
      const stem = `2026-11-22_15-00-0${second}Z_${id}`;
      // Compact, `trigger` first, a nested object and a string that both hold an "app" key before the real one.
      const record = `{"trigger":"cli","note":"\\"app\\": \\"${decoy}\\"","served":{"app":"${decoy}","ids":[{"app":"${decoy}"}]},"status":"done","id":"${id}","app":"${app}","startedAt":"2026-11-22T15:00:0${second}.000Z"}`;
      expect(JSON.parse(record).app).toBe(app);
      writeFileSync(join(dir, `${stem}.json`), record);
      writeFileSync(join(dir, `${stem}.log`), "");
      return stem;
    };
    const web = [1, 2, 3].map((s) => write(s, "web", "api"));
    const api = [4, 5].map((s) => write(s, "api", "web"));
    const removed = pruneLogs(cwd, 1, 0, Date.parse("2026-11-22T16:00:00Z"), "web");
    expect(removed.sort()).toEqual(web.slice(0, 2).sort());
    expect(stems(cwd).sort()).toEqual([web[2]!, ...api].sort());
  });
});
