/**
 * The queue under faults: a wall clock stepped backwards, a deploy's process group left behind by a crash, a
 * repository deleted while deploys wait.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { createConsola, LogLevels } from "consola";
import { groupAlive, groupOf } from "../../src/system/groups.ts";
import { recoverOrphan } from "../../src/queue/recovery.ts";
import { makeGate, serialized, StreamReader, startGated } from "../_support/gate.ts";
import {
  baseEnv,
  CLI,
  git,
  lastLine,
  logFiles,
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
import { groupOnRecord, spawnDeploy } from "../_support/queueing.ts";

/** libfaketime (Debian package `faketime`): its clock is read from a file on every call (FAKETIME_NO_CACHE). */
const FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
const hasFaketime = existsSync(FAKETIME_LIB);
if (!hasFaketime) console.warn(`skipping the clock-step tests: ${FAKETIME_LIB} is missing (apt-get install faketime)`);

/** An environment whose processes read their wall clock from a file; `step(spec)` moves it ("-1h", "+0"). */
function fakeClock() {
  const file = join(tempDir("service-clock-"), "clock");
  writeFileSync(file, "+0\n");
  return {
    env: { LD_PRELOAD: FAKETIME_LIB, FAKETIME_TIMESTAMP_FILE: file, FAKETIME_NO_CACHE: "1" },
    step: (spec: string) => writeFileSync(file, `${spec}\n`),
  };
}

/** Every reader's stream ended with a [done] line (bounded: a wedged queue fails the test, it does not hang it). */
async function allDone(readers: StreamReader[], what: string): Promise<string[]> {
  await waitFor(() => readers.every((r) => lastLine(r.text).startsWith("[done]")), what, 30_000);
  return Promise.all(readers.map((r) => r.done));
}

describe("a wall clock that steps backwards", () => {
  test.skipIf(!hasFaketime)(
    "the clock stepped back 1 h between arrivals: every deploy still ends [done] ok=true, in arrival order",
    async () => {
      const clock = fakeClock();
      await using gated = await startGated(clock.env);
      const { gate, server } = gated;
      const readers: StreamReader[] = [];
      const arrive = async (i: number) => {
        const reader = new StreamReader(await post(server.url, { secret: SECRET }));
        await waitFor(() => reader.text.includes("\n"), `request ${i} answered`);
        readers.push(reader);
      };
      await arrive(0);
      await waitFor(() => gate.lines().length === 1, "the first deploy to start");
      await arrive(1);
      clock.step("-1h");
      await arrive(2);
      await arrive(3);
      expect(readers.slice(1).map((r) => r.text.split("\n")[0])).toEqual(
        [1, 2, 3].map((n) => `[queued] waiting; position=${n}`),
      );
      gate.open();
      const bodies = await allDone(readers, "every deploy to end");
      for (const body of bodies) expect(lastLine(body)).toBe("[done] ok=true exitCode=0");
      expect(gate.starts()).toEqual(readers.map((r) => r.id()!));
      expect(serialized(gate.lines())).toBe(true);
    },
  );

  test.skipIf(!hasFaketime)(
    "a `deploy` whose clock is 1 h behind the server's waits behind the server's deploys (one order across processes)",
    async () => {
      const clock = fakeClock();
      await using gated = await startGated();
      const { repo, gate, env, server } = gated;
      const first = new StreamReader(await post(server.url, { secret: SECRET }));
      await waitFor(() => gate.lines().length === 1, "the webhook deploy to start");
      const second = new StreamReader(await post(server.url, { secret: SECRET }));
      await waitFor(() => second.text.includes("[queued]"), "the second webhook deploy to queue");
      clock.step("-1h");
      await using shell = spawnDeploy(repo.clone, { ...env, ...clock.env });
      const cli = shell.out;
      await waitFor(() => cli.text.includes("\n"), "the CLI deploy's first line");
      expect(cli.text.split("\n")[0]).toBe("[queued] waiting; position=2");
      gate.open();
      await allDone([first, second, cli], "every deploy to end");
      expect(await shell.proc.exited).toBe(0);
      expect(gate.starts()).toEqual([first.id()!, second.id()!, cli.id()!]);
      expect(serialized(gate.lines())).toBe(true);
    },
  );
});

describe("tickets taken at the same moment", () => {
  test("`deploy` commands started together from several processes run one at a time, each exactly once", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const env = { SERVICE_RUN_SCRIPT: gate.script, ...gate.env };
    const procs = Array.from({ length: 4 }, () =>
      Bun.spawn([...CLI, "deploy"], {
        cwd: repo.clone,
        env: baseEnv(env),
        stdin: "ignore",
        stdout: "ignore",
        stderr: "ignore",
      }),
    );
    using _cleanup = defer(() => {
      gate.open();
      for (const p of procs) p.kill("SIGKILL");
    });
    await waitFor(() => gate.lines().length === 1, "one deploy to start");
    gate.open();
    await waitFor(() => procs.every((p) => p.exitCode !== null), "every deploy to end", 30_000);
    expect(procs.map((p) => p.exitCode)).toEqual([0, 0, 0, 0]);
    expect(new Set(gate.starts()).size).toBe(4);
    expect(serialized(gate.lines())).toBe(true);
  });
});

describe("heartbeats", () => {
  test("a queued deploy's heartbeat says it is still waiting, not running", async () => {
    await using gated = await startGated({ SERVICE_HEARTBEAT_MS: "200" });
    const { gate, server } = gated;
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    const queued = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => queued.text.includes("[heartbeat]"), "a heartbeat while queued");
    await waitFor(() => first.text.includes("[heartbeat]"), "a heartbeat while running");
    gate.open();
    const [running = "", waited = ""] = await allDone([first, queued], "both deploys to end");
    expect(waited.split("\n").find((l) => l.startsWith("[heartbeat]"))).toMatch(
      /^\[heartbeat\] still waiting after \d+ s$/,
    );
    expect(running.split("\n").find((l) => l.startsWith("[heartbeat]"))).toMatch(
      /^\[heartbeat\] still running after \d+ s$/,
    );
  });
});

/**
 * A run script that records `start <id>` then `end <id>`, and `overlap` when it starts while the previous
 * run's shell is still alive (zombies do not count: a container's init may not reap them). With HOLD set it
 * never ends by itself: what a deploy running when its process is killed -9 leaves behind.
 */
function holdingScript() {
  const dir = tempDir("service-hold-");
  const script = join(dir, "job.sh");
  const runs = join(dir, "runs.log");
  writeFileSync(
    script,
    [
      "#!/bin/sh",
      'if [ -f "$PIDS" ]; then state=$(cut -d" " -f3 "/proc/$(cat "$PIDS")/stat" 2>/dev/null); [ -n "$state" ] && [ "$state" != Z ] && echo overlap >> "$RUNS"; fi',
      'echo $$ > "$PIDS"',
      'echo "start $SERVICE_DEPLOY_ID" >> "$RUNS"',
      'if [ -n "$HOLD" ]; then while :; do sleep 0.05; done; fi',
      'echo "end $SERVICE_DEPLOY_ID" >> "$RUNS"',
      "",
    ].join("\n"),
  );
  chmodSync(script, 0o755);
  const lines = () => (existsSync(runs) ? readFileSync(runs, "utf8").trim().split("\n").filter(Boolean) : []);
  return {
    env: { SERVICE_RUN_SCRIPT: script, RUNS: runs, PIDS: join(dir, "pid") },
    lines,
    kinds: () => lines().map((l) => l.split(" ")[0]),
    /** The pid of the script that started last: its process group's id. */
    pid: () => Number(readFileSync(join(dir, "pid"), "utf8").trim()),
  };
}

/** The .log of deploy `id` under `cwd`. */
function deployLog(cwd: string, id: string): string {
  return readFileSync(join(cwd, ".service", "logs", logFiles(cwd).find((f) => f.endsWith(`${id}.log`))!), "utf8");
}

describe("a deploy whose process was killed -9 left its script running", () => {
  test("the next server start stops the orphaned process group (TERM, then KILL) before the next deploy runs, and says so at start and in the interrupted deploy's log", async () => {
    const repo = makeRepo();
    const hold = holdingScript();
    const first = await startServer(repo.clone, { SERVICE_SECRET: SECRET, ...hold.env, HOLD: "1" });
    const reader = new StreamReader(await post(first.url, { secret: SECRET }));
    await waitFor(() => hold.lines().length === 1, "the first deploy's script to start");
    await groupOnRecord(repo.clone, hold.pid());
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    await reader.done;
    const id = hold.lines()[0]!.split(" ")[1]!;
    await using second = await startServer(repo.clone, { SERVICE_SECRET: SECRET, ...hold.env, HOLD: "" });
    const output = () => `${second.stdout.text}${second.stderr.text}`;
    expect(output()).toContain(`deploy ${id} of ${repo.clone} was interrupted and left process group`);
    const text = await (await post(second.url, { secret: SECRET })).text();
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(hold.kinds()).toEqual(["start", "start", "end"]);
    expect(deployLog(repo.clone, id)).toMatch(
      /\[interrupted\] this deploy's process died while process group \d+ \(.*\) ran; stopping it/,
    );
  });

  test("a `deploy` killed -9 mid-script: the next `deploy` stops its process group first, never runs alongside it", async () => {
    const repo = makeRepo();
    const hold = holdingScript();
    const proc = Bun.spawn([...CLI, "deploy"], {
      cwd: repo.clone,
      env: baseEnv({ ...hold.env, HOLD: "1" }),
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    await waitFor(() => hold.lines().length === 1, "the first deploy's script to start");
    await groupOnRecord(repo.clone, hold.pid());
    proc.kill("SIGKILL");
    await proc.exited;
    const id = hold.lines()[0]!.split(" ")[1]!;
    const next = await runCli(["deploy"], { cwd: repo.clone, env: { ...hold.env, HOLD: "" } });
    expect(next.code).toBe(0);
    expect(next.stderr + next.stdout).toContain(`deploy ${id} of ${repo.clone} was interrupted and left process group`);
    expect(hold.kinds()).toEqual(["start", "start", "end"]);
    expect(deployLog(repo.clone, id)).toContain("[interrupted] this deploy's process died while process group");
  });
});

describe("a repository removed while deploys wait", () => {
  test("the waiting deploys end ok=false with a clear error and their logs, nothing is recreated inside it, and a re-clone to the same path deploys normally", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const cwd = tempDir("service-cwd-");
    await using server = await startServer(cwd, {
      SERVICE_SECRET: SECRET,
      SERVICE_REPO_PATH: repo.clone,
      SERVICE_RUN_SCRIPT: gate.script,
      ...gate.env,
    });
    using _gateOpened = defer(() => gate.open());
    const running = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    const waiting = [
      new StreamReader(await post(server.url, { secret: SECRET })),
      new StreamReader(await post(server.url, { secret: SECRET })),
    ];
    await waitFor(() => waiting.every((w) => w.text.includes("[queued]")), "two deploys to queue");
    rmSync(repo.clone, { recursive: true, force: true });
    gate.open();
    await allDone([running, ...waiting], "every deploy to end");
    for (const w of waiting) {
      expect(w.text).toContain(
        `[deploy] not started: the repository ${repo.clone} was removed while this deploy waited`,
      );
      expect(lastLine(w.text)).toBe("[done] ok=false exitCode=null");
    }
    expect(existsSync(repo.clone)).toBe(false);
    const refused = logFiles(cwd)
      .filter((f) => f.endsWith(".json"))
      .map((f) => readJson(join(cwd, ".service", "logs", f)))
      .filter((r) => r.result?.error?.includes("was removed while this deploy waited"));
    expect(refused.map((r) => [r.status, r.result.ok])).toEqual([
      ["done", false],
      ["done", false],
    ]);
    git(repo.dir, "clone", "--quiet", repo.remote, repo.clone);
    const result = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(result.ok).toBe(true);
    expect(gate.starts()).toEqual([running.id()!, result.id]);
  });
});

describe("one logger", () => {
  test("the process groups a dead deploy left running are reported through the injected logger", async () => {
    const said: string[] = [];
    const logger = createConsola({
      level: LogLevels.debug,
      reporters: [{ log: (entry) => said.push(entry.args.join(" ")) }],
    });
    // A process group of its own, as a deploy's script runs in: the dead deploy's leftover.
    const child = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
    const pid = child.pid!;
    using _killed = defer(() => {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {}
    });
    const group = groupOf(pid);
    await waitFor(() => groupAlive(group), "the leftover group to run");
    const dir = tempDir("service-tickets-");
    // The seat of a dead holder (pid 1 never ran this test; its start time "0" is nobody's): its ticket number 1.
    const name = "000000000000001-0000000001-0-0";
    writeFileSync(join(dir, "seat-1-0-0"), '000000000000001 0\n{"groups":[]}');
    const id = crypto.randomUUID();
    await recoverOrphan("/srv/app", dir, { name, content: { id, groups: [group] } }, logger);
    const text = said.join("\n");
    expect(text).toContain(`deploy ${id} of /srv/app was interrupted and left process group ${pid}`);
    expect(text).toContain(`stopped process group ${pid}`);
    expect(existsSync(join(dir, "seat-1-0-0"))).toBe(false);
  });
});
