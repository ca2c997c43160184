/**
 * Deploy history from the CLI (docs/log-files.md "Reading the history: `service logs`"): `service logs` lists the deploys of
 * `.service/logs/` newest first, prints one deploy's log, follows a running one, and tolerates damaged files. It
 * reads files only: the servers below exist to create deploys (and a running one to follow), never to answer
 * `logs`.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeGate, startGated } from "../_support/gate.ts";
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
import { copyPair, deployIdOf, logDirOf, parseTable, spawnCli, stemOf } from "../_support/ops-helpers.ts";

const logs = (cwd: string, ...args: string[]) => runCli(["logs", ...args], { cwd });

/** `count` deploys by the CLI in `repo` (run script `script(i)`), each exiting 0; their ids, oldest first. */
async function deployedTimes(repo: string, count: number, script: (i: number) => string = () => "true") {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const run = await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: script(i) } });
    expect(run.code).toBe(0);
    ids.push(deployIdOf(run.stdout));
  }
  return ids;
}

/** The table's STARTED cell for an ISO start time. */
const startedCell = (iso: string) => iso.replace("T", " ").slice(0, 19);

describe("service logs: the list", () => {
  test("after webhook and CLI deploys: newest first, with start, short id, app, trigger, duration, result, exit code and rollback", async () => {
    const repo = makeRepo({ "README.md": "app\n", "step.sh": "exit 0\n" });
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "sh step.sh",
      SERVICE_ROLLBACK_ON_FAILURE: "true",
    });
    const deploys: { id: string; startedAt: string }[] = [];
    // 1: webhook, ok.
    const first = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(first.ok).toBe(true);
    deploys.push(first);
    // 2: CLI, the script fails with 3 (no rollback for this one: the CLI's environment does not enable it).
    const failed = await runCli(["deploy"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: "sh -c 'exit 3'" } });
    expect(failed.code).toBe(1);
    deploys.push(readJson(join(logDirOf(repo.clone), `${stemOf(repo.clone, deployIdOf(failed.stdout))}.json`)));
    // 3: webhook, a pushed commit breaks the script: rolled back to the previous commit, which works.
    repo.push({ "step.sh": "exit 7\n" }, "break it");
    const rolled = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(rolled.ok).toBe(true);
    expect(rolled.rollback).toBeDefined();
    deploys.push(rolled);
    await server.stop();
    // 4: CLI, ok, with no server running at all.
    const fine = await runCli(["deploy"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: "echo fine" } });
    expect(fine.code).toBe(0);
    deploys.push(readJson(join(logDirOf(repo.clone), `${stemOf(repo.clone, deployIdOf(fine.stdout))}.json`)));

    const listed = await logs(repo.clone);
    expect(listed.code).toBe(0);
    const rows = parseTable(listed.stdout);
    expect(Object.keys(rows[0]!)).toEqual([
      "STARTED (UTC)",
      "ID",
      "APP",
      "TRIGGER",
      "EVENT",
      "DURATION",
      "RESULT",
      "EXIT",
      "ROLLBACK",
      "BY",
      "COMMIT",
    ]);
    expect(rows.map((r) => r.ID)).toEqual([...deploys].reverse().map((d) => d.id.slice(0, 8)));
    expect(rows.map((r) => r["STARTED (UTC)"])).toEqual([...deploys].reverse().map((d) => startedCell(d.startedAt)));
    expect(rows.map((r) => r.APP)).toEqual(["-", "-", "-", "-"]);
    expect(rows.map((r) => r.TRIGGER)).toEqual(["cli", "webhook", "cli", "webhook"]);
    expect(rows.map((r) => r.EVENT)).toEqual(["-", "-", "-", "-"]);
    // The rolled-back deploy ended ok=true (its redeploy of the previous commit worked), but what was pushed is not live.
    expect(rows.map((r) => r.RESULT)).toEqual(["ok", "rolled back", "FAILED", "ok"]);
    expect(rows.map((r) => r.EXIT)).toEqual(["0", "0", "3", "0"]);
    expect(rows.map((r) => r.ROLLBACK)).toEqual(["-", "yes", "-", "-"]);
    for (const row of rows) expect(row.DURATION).toMatch(/^\d+\.\d s$|^\d+m \d\ds$/);

    // --limit: the newest N.
    const limited = parseTable((await logs(repo.clone, "--limit", "2")).stdout);
    expect(limited.map((r) => r.ID)).toEqual([deploys[3]!.id.slice(0, 8), deploys[2]!.id.slice(0, 8)]);

    // --failed: the deploys whose run failed, rolled back or not.
    const failedRows = parseTable((await logs(repo.clone, "--failed")).stdout);
    expect(failedRows.map((r) => r.ID)).toEqual([deploys[2]!.id.slice(0, 8), deploys[1]!.id.slice(0, 8)]);

    // --json: an array of entries, newest first, with the same facts.
    const json = await logs(repo.clone, "--json");
    expect(json.code).toBe(0);
    const entries = JSON.parse(json.stdout);
    expect(Array.isArray(entries)).toBe(true);
    expect(entries.map((e: any) => e.id)).toEqual([...deploys].reverse().map((d) => d.id));
    expect(entries.map((e: any) => e.startedAt)).toEqual([...deploys].reverse().map((d) => d.startedAt));
    expect(entries.map((e: any) => e.trigger)).toEqual(["cli", "webhook", "cli", "webhook"]);
    expect(entries.map((e: any) => e.ok)).toEqual([true, true, false, true]);
    expect(entries.map((e: any) => e.exitCode)).toEqual([0, 0, 3, 0]);
    expect(entries.map((e: any) => e.rolledBack)).toEqual([false, true, false, false]);
    expect(entries.map((e: any) => e.status)).toEqual(["done", "done", "done", "done"]);
    for (const entry of entries) expect(typeof entry.durationMs).toBe("number");

    const combined = JSON.parse((await logs(repo.clone, "--json", "--failed", "--limit", "5")).stdout);
    expect(combined.map((e: any) => e.id)).toEqual([deploys[2]!.id, deploys[1]!.id]);
  }, 40_000);

  test("deploys started in the same second are still listed newest first (by their start time, not their random ids)", async () => {
    const repo = makeLocalRepo();
    const ids = await deployedTimes(repo, 6);
    const entries = JSON.parse((await logs(repo, "--json")).stdout);
    expect(entries.map((e: any) => e.id)).toEqual([...ids].reverse());
    const last = await logs(repo, "last");
    expect(last.stdout).toStartWith(`[deploy] ${ids[5]} started`);
  });

  test("--app lists one app's deploys in multi-app mode (and picks `last` among them); the APP column names the app", async () => {
    const a = makeRepo();
    const b = makeRepo();
    const cwd = tempDir("service-apps-");
    writeFileSync(
      join(cwd, "service.yaml"),
      [
        "apps:",
        "  - name: alpha",
        "    host: localhost",
        "    path: /a",
        `    repoPath: ${a.clone}`,
        "    runScript: echo alpha",
        "    secret: alpha-secret-123456",
        "  - name: beta",
        "    host: localhost",
        "    path: /b",
        `    repoPath: ${b.clone}`,
        "    runScript: echo beta",
        "    secret: beta-secret-654321",
        "",
      ].join("\n"),
    );
    await using server = await startServer(cwd);
    const alpha = await (await post(`${server.url}/a?format=json`, { secret: "alpha-secret-123456" })).json();
    const beta = await (await post(`${server.url}/b?format=json`, { secret: "beta-secret-654321" })).json();
    expect(alpha.ok).toBe(true);
    expect(beta.ok).toBe(true);
    await server.stop();
    const cli = await runCli(["deploy", "--app", "beta"], { cwd });
    expect(cli.code).toBe(0);
    const betaCli = deployIdOf(cli.stdout);

    const all = parseTable((await logs(cwd)).stdout);
    expect(all.map((r) => [r.ID, r.APP, r.TRIGGER])).toEqual([
      [betaCli.slice(0, 8), "beta", "cli"],
      [beta.id.slice(0, 8), "beta", "webhook"],
      [alpha.id.slice(0, 8), "alpha", "webhook"],
    ]);
    const onlyAlpha = parseTable((await logs(cwd, "--app", "alpha")).stdout);
    expect(onlyAlpha.map((r) => r.ID)).toEqual([alpha.id.slice(0, 8)]);
    const onlyBeta = JSON.parse((await logs(cwd, "--app", "beta", "--json")).stdout);
    expect(onlyBeta.map((e: any) => [e.id, e.app])).toEqual([
      [betaCli, "beta"],
      [beta.id, "beta"],
    ]);
    // One deploy by `last` or an id: --app picks among that app's deploys only.
    const lastAlpha = await logs(cwd, "last", "--app", "alpha", "--json");
    expect(lastAlpha.code).toBe(0);
    expect(JSON.parse(lastAlpha.stdout).id).toBe(alpha.id);
    const otherApp = await logs(cwd, beta.id.slice(0, 8), "--app", "alpha");
    expect(otherApp.code).toBe(1);
    expect(otherApp.stderr).toContain(`no deploy with id "${beta.id.slice(0, 8)}"`);
    const noneOfGamma = await logs(cwd, "last", "--app", "gamma");
    expect(noneOfGamma.code).toBe(1);
    expect(noneOfGamma.stderr).toContain('no deploys of app "gamma"');
  }, 30_000);

  test("with no deploys yet it says so (naming the directory it looked in) and exits 0", async () => {
    const cwd = tempDir();
    const listed = await logs(cwd);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim()).toStartWith(`no deploys here: ${join(cwd, ".service", "logs")} does not exist`);
    expect(JSON.parse((await logs(cwd, "--json")).stdout)).toEqual([]);
  });
});

describe("service logs <id>: one deploy", () => {
  test("an id, an id prefix and `last` print the .log; --json prints the JSON file", async () => {
    const repo = makeLocalRepo();
    const first = await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "echo first-deploy" } });
    const second = await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "echo second-deploy" } });
    const [id1, id2] = [deployIdOf(first.stdout), deployIdOf(second.stdout)];
    const file = (id: string, ext: string) => join(logDirOf(repo), `${stemOf(repo, id)}${ext}`);

    const byId = await logs(repo, id1);
    expect(byId.code).toBe(0);
    expect(byId.stdout).toBe(readFileSync(file(id1, ".log"), "utf8"));
    expect(byId.stdout).toContain("first-deploy\n");
    expect(lastLine(byId.stdout)).toBe("[done] ok=true exitCode=0");

    const byPrefix = await logs(repo, id1.slice(0, 6));
    expect(byPrefix.code).toBe(0);
    expect(byPrefix.stdout).toBe(byId.stdout);

    const last = await logs(repo, "last");
    expect(last.code).toBe(0);
    expect(last.stdout).toBe(readFileSync(file(id2, ".log"), "utf8"));
    expect(last.stdout).toContain("second-deploy\n");

    const json = await logs(repo, id2.slice(0, 8), "--json");
    expect(json.code).toBe(0);
    expect(json.stdout).toBe(readFileSync(file(id2, ".json"), "utf8"));
    expect(JSON.parse(json.stdout).result.run.stdout).toBe("second-deploy\n");
  }, 20_000);

  test("an ambiguous prefix and an unknown id exit non-zero with one clear line", async () => {
    const repo = makeLocalRepo();
    const run = await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "true" } });
    const id = deployIdOf(run.stdout);
    // A second deploy whose id shares all but the last character with the first one.
    const twin = `${id.slice(0, 35)}${id.endsWith("0") ? "1" : "0"}`;
    copyPair(repo, stemOf(repo, id), stemOf(repo, id).replace(id, twin));

    const ambiguous = await logs(repo, id.slice(0, 20));
    expect(ambiguous.code).not.toBe(0);
    expect(ambiguous.stdout).toBe("");
    expect(ambiguous.stderr.trim().split("\n")).toHaveLength(1);
    expect(ambiguous.stderr).toContain(`"${id.slice(0, 20)}" matches 2 deploys`);

    const unknown = await logs(repo, "0000ffff");
    expect(unknown.code).not.toBe(0);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr.trim().split("\n")).toHaveLength(1);
    expect(unknown.stderr).toContain('no deploy with id "0000ffff"');

    // The full id is not ambiguous.
    expect((await logs(repo, id)).code).toBe(0);
  });
});

describe("service logs: records of an older service, and fields edited by hand", () => {
  test("a record without rolledBack reads its rollback object (rolled back, listed by --failed); an event or delivery that is not a string reads as none", async () => {
    const repo = makeLocalRepo();
    const ids = await deployedTimes(repo, 2);
    const [old, edited] = ids as [string, string];
    const file = (id: string) => join(logDirOf(repo), `${stemOf(repo, id)}.json`);
    const oldRecord = readJson(file(old));
    delete oldRecord.event;
    delete oldRecord.delivery;
    delete oldRecord.result.rolledBack;
    oldRecord.result.rollback = {
      to: "a".repeat(40),
      from: "b".repeat(40),
      ok: true,
      exitCode: 0,
      timedOut: false,
      stdout: "",
      stderr: "",
      error: null,
    };
    writeFileSync(file(old), JSON.stringify(oldRecord));
    const editedRecord = readJson(file(edited));
    editedRecord.event = 42;
    editedRecord.delivery = { id: "x" };
    writeFileSync(file(edited), JSON.stringify(editedRecord));

    const rows = parseTable((await logs(repo)).stdout);
    const row = (id: string) => rows.find((r) => r.ID === id.slice(0, 8))!;
    expect(row(old).RESULT).toBe("rolled back");
    expect(row(edited).RESULT).toBe("ok");
    expect(row(edited).EVENT).toBe("-");
    const entries = JSON.parse((await logs(repo, "--json")).stdout);
    expect(entries.map((e: any) => [e.id, e.rolledBack, e.event, e.delivery])).toEqual([
      [edited, false, null, null],
      [old, true, null, null],
    ]);
    expect(JSON.parse((await logs(repo, "--failed", "--json")).stdout).map((e: any) => e.id)).toEqual([old]);
  });
});

describe("service logs: damaged files", () => {
  test("a truncated JSON file, a garbage one, a missing .log and a lone .log are listed with a corrupt mark, not a failure", async () => {
    const repo = makeLocalRepo();
    const ids = await deployedTimes(repo, 5, (i) => `echo deploy-${i}`);
    const [truncated, garbage, noLog, noJson, intact] = ids as [string, string, string, string, string];
    const file = (id: string, ext: string) => join(logDirOf(repo), `${stemOf(repo, id)}${ext}`);
    // A crash mid-write: the first half of the record (its JSON, without the spaces a record file may end with).
    const whole = readFileSync(file(truncated, ".json"), "utf8").trimEnd();
    writeFileSync(file(truncated, ".json"), whole.slice(0, Math.floor(whole.length / 2)));
    writeFileSync(file(garbage, ".json"), "\u0000\u0007 not json at all {{{");
    rmSync(file(noLog, ".log"));
    rmSync(file(noJson, ".json"));

    const listed = await logs(repo);
    expect(listed.code).toBe(0);
    const rows = parseTable(listed.stdout);
    expect(rows.map((r) => r.ID)).toEqual([...ids].reverse().map((id) => id.slice(0, 8)));
    const row = (id: string) => rows.find((r) => r.ID === id.slice(0, 8))!;
    expect(row(truncated).RESULT).toBe("corrupt");
    expect(row(truncated).NOTE).toStartWith("corrupt: unreadable JSON");
    expect(row(garbage).RESULT).toBe("corrupt");
    expect(row(garbage).NOTE).toStartWith("corrupt: unreadable JSON");
    expect(row(noJson).RESULT).toBe("corrupt");
    expect(row(noJson).NOTE).toBe("corrupt: the .json file is missing");
    // The record of this one is fine: its outcome is known, its missing .log is marked.
    expect(row(noLog).RESULT).toBe("ok");
    expect(row(noLog).NOTE).toBe("corrupt: the .log file is missing");
    expect(row(intact).RESULT).toBe("ok");
    expect(row(intact).NOTE).toBe("");

    const entries = JSON.parse((await logs(repo, "--json")).stdout);
    expect(entries.map((e: any) => e.id)).toEqual([...ids].reverse());
    const entry = (id: string) => entries.find((e: any) => e.id === id);
    expect(entry(truncated).status).toBe("corrupt");
    expect(entry(truncated).problem).toContain("unreadable JSON");
    expect(entry(garbage).status).toBe("corrupt");
    expect(entry(noJson).status).toBe("corrupt");
    expect(entry(noLog).status).toBe("done");
    expect(entry(noLog).problem).toContain(".log file is missing");
    expect(entry(intact).problem).toBeUndefined();

    // --failed keeps the deploys whose outcome is unknown, not the ones known to be ok.
    const failed = JSON.parse((await logs(repo, "--failed", "--json")).stdout);
    expect(failed.map((e: any) => e.id).sort()).toEqual([truncated, garbage, noJson].sort());

    // The .log of a deploy with a broken record still prints, with a note.
    const shown = await logs(repo, truncated);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("deploy-0\n");
    expect(shown.stderr).toContain("unreadable JSON");

    // A missing .log: a clear one-line error, not a stack trace.
    const missing = await logs(repo, noLog);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
    expect(missing.stderr).toContain("is missing");
  }, 30_000);
});

/** Opens the gate; the follower then exits 0 having printed exactly the deploy's .log, up to [done] ok=true. */
async function opensToTheEnd(
  gate: ReturnType<typeof makeGate>,
  follower: ReturnType<typeof spawnCli>,
  cwd: string,
  id: string,
): Promise<void> {
  gate.open();
  expect(await follower.exited).toBe(0);
  expect(lastLine(follower.stdout.text)).toBe("[done] ok=true exitCode=0");
  expect(follower.stdout.text).toBe(readFileSync(join(logDirOf(cwd), `${stemOf(cwd, id)}.log`), "utf8"));
}

describe("service logs <id> --follow", () => {
  test("prints a running deploy's output as it comes, and exits after its [done] line", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: `echo before-gate\n${gate.script}\necho after-gate`,
      ...gate.env,
    });
    using _gateOpened = defer(() => gate.open());
    const ack = await (await post(`${server.url}/?ack=1&format=json`, { secret: SECRET })).json();
    expect(ack.accepted).toBe(true);
    const id: string = ack.id;
    await waitFor(() => gate.starts().includes(id), "the deploy to reach the gate");

    await using follower = spawnCli(["logs", id.slice(0, 8), "--follow"], { cwd: repo.clone });
    await waitFor(
      () => follower.stdout.text.includes(`[run] $ ${gate.script}\n`),
      "the followed output up to the gate",
    );
    expect(follower.stdout.text).toStartWith(`[deploy] ${id} started`);
    expect(follower.stdout.text).toContain("before-gate\n");
    // The deploy cannot end before the gate opens: the follower is still there, with no [done] yet.
    expect(follower.proc.exitCode).toBeNull();
    expect(follower.stdout.text).not.toContain("[done]");

    await opensToTheEnd(gate, follower, repo.clone, id);
    expect(follower.stdout.text).toContain("after-gate\n");
  }, 30_000);

  test("an acknowledged deploy still waiting in the queue is waited for, then followed to its [done] line", async () => {
    await using gated = await startGated();
    const { repo, gate, server } = gated;
    const first = await (await post(`${server.url}/?ack=1&format=json`, { secret: SECRET })).json();
    await waitFor(() => gate.starts().includes(first.id), "the first deploy to hold the queue");
    const second = await (await post(`${server.url}/?ack=1&format=json`, { secret: SECRET })).json();
    expect(second.accepted).toBe(true);
    expect(second.position).toBe(1);
    const id: string = second.id;
    expect(logFiles(repo.clone).some((name) => name.includes(id))).toBe(false);

    await using follower = spawnCli(["logs", id, "--follow"], { cwd: repo.clone });
    await waitFor(
      () => follower.stderr.text.includes(`waiting for deploy ${id} to start`),
      "the follower to say it waits",
    );
    // Still queued behind the gated deploy: no files yet, the follower waits on.
    expect(logFiles(repo.clone).some((name) => name.includes(id))).toBe(false);
    expect(follower.proc.exitCode).toBeNull();

    await opensToTheEnd(gate, follower, repo.clone, id);
    expect(follower.stdout.text).toContain(`[deploy] ${id} started`);
    expect(follower.stdout.text).not.toContain(first.id);
  }, 30_000);

  test("a finished deploy is printed whole and --follow exits at once; a ref that cannot be an id fails at once", async () => {
    const repo = makeLocalRepo();
    const run = await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "echo done-already" } });
    const id = deployIdOf(run.stdout);
    const followed = await runCli(["logs", "last", "--follow"], { cwd: repo, timeoutMs: 15_000 });
    expect(followed.code).toBe(0);
    expect(followed.stdout).toContain(`[deploy] ${id} started`);
    expect(lastLine(followed.stdout)).toBe("[done] ok=true exitCode=0");

    const bogus = await runCli(["logs", "not-an-id", "--follow"], { cwd: repo, timeoutMs: 15_000 });
    expect(bogus.code).not.toBe(0);
    expect(bogus.stderr.trim().split("\n")).toHaveLength(1);
    expect(bogus.stderr).toContain('"not-an-id" is not a deploy id');
  });

  test("a deploy whose service died mid-deploy (record still running, process gone) ends the follow with a clear message", async () => {
    const repo = makeLocalRepo();
    const run = await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "echo half-way" } });
    const id = deployIdOf(run.stdout);
    // What kill -9 leaves behind: a record still "running", owned by a process that no longer exists.
    const json = join(logDirOf(repo), `${stemOf(repo, id)}.json`);
    const dead = Bun.spawnSync(["true"]).pid;
    writeFileSync(json, JSON.stringify({ ...readJson(json), status: "running", pid: dead, result: undefined }));
    // Killed before the end: no [done] line (a .log that has one tells the deploy ended, see full-disk.test.ts).
    const log = json.replace(/\.json$/, ".log");
    writeFileSync(log, readFileSync(log, "utf8").replace(/\[done\][^\n]*\n$/, ""));
    const followed = await runCli(["logs", id, "--follow"], { cwd: repo, timeoutMs: 15_000 });
    expect(followed.code).not.toBe(0);
    expect(followed.stdout).toContain("half-way\n");
    expect(followed.stderr).toContain(`(pid ${dead}) is gone`);
    expect(existsSync(json)).toBe(true);
  });
});
