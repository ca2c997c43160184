/**
 * The queue under faults: a wall clock stepped backwards, a deploy's process group left behind by a crash, a
 * repository deleted while deploys wait.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeGate, serialized, StreamReader } from "./gate.ts";
import { baseEnv, CLI, git, lastLine, makeRepo, post, SECRET, startServer, tempDir, waitFor } from "./helpers.ts";

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
  test.skipIf(!hasFaketime)("the clock stepped back 1 h between arrivals: every deploy still ends [done] ok=true, in arrival order", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const clock = fakeClock();
    const server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: gate.script, ...gate.env, ...clock.env });
    try {
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
      expect(readers.slice(1).map((r) => r.text.split("\n")[0])).toEqual([1, 2, 3].map((n) => `[queued] waiting; position=${n}`));
      gate.open();
      const bodies = await allDone(readers, "every deploy to end");
      for (const body of bodies) expect(lastLine(body)).toBe("[done] ok=true exitCode=0");
      expect(gate.starts()).toEqual(readers.map((r) => r.id()!));
      expect(serialized(gate.lines())).toBe(true);
    } finally {
      gate.open();
      await server.stop();
    }
  });

  test.skipIf(!hasFaketime)("a `deploy` whose clock is 1 h behind the server's waits behind the server's deploys (one order across processes)", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const clock = fakeClock();
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: gate.script, ...gate.env };
    const server = await startServer(repo.clone, env);
    try {
      const first = new StreamReader(await post(server.url, { secret: SECRET }));
      await waitFor(() => gate.lines().length === 1, "the webhook deploy to start");
      const second = new StreamReader(await post(server.url, { secret: SECRET }));
      await waitFor(() => second.text.includes("[queued]"), "the second webhook deploy to queue");
      clock.step("-1h");
      const proc = Bun.spawn([...CLI, "deploy"], { cwd: repo.clone, env: baseEnv({ ...env, ...clock.env }), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const cli = new StreamReader(new Response(proc.stdout));
      await waitFor(() => cli.text.includes("\n"), "the CLI deploy's first line");
      expect(cli.text.split("\n")[0]).toBe("[queued] waiting; position=2");
      gate.open();
      await allDone([first, second, cli], "every deploy to end");
      expect(await proc.exited).toBe(0);
      expect(gate.starts()).toEqual([first.id()!, second.id()!, cli.id()!]);
      expect(serialized(gate.lines())).toBe(true);
    } finally {
      gate.open();
      await server.stop();
    }
  });
});

describe("heartbeats", () => {
  test("a queued deploy's heartbeat says it is still waiting, not running", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: gate.script, SERVICE_HEARTBEAT_MS: "200", ...gate.env });
    try {
      const first = new StreamReader(await post(server.url, { secret: SECRET }));
      await waitFor(() => gate.lines().length === 1, "the first deploy to start");
      const queued = new StreamReader(await post(server.url, { secret: SECRET }));
      await waitFor(() => queued.text.includes("[heartbeat]"), "a heartbeat while queued");
      await waitFor(() => first.text.includes("[heartbeat]"), "a heartbeat while running");
      gate.open();
      const [running = "", waited = ""] = await allDone([first, queued], "both deploys to end");
      expect(waited.split("\n").find((l) => l.startsWith("[heartbeat]"))).toMatch(/^\[heartbeat\] still waiting after \d+ s$/);
      expect(running.split("\n").find((l) => l.startsWith("[heartbeat]"))).toMatch(/^\[heartbeat\] still running after \d+ s$/);
    } finally {
      gate.open();
      await server.stop();
    }
  });
});
