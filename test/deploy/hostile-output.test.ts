/**
 * Hostile run scripts (docs/reliability.md "Faults and what the service does"): output that is binary garbage,
 * invalid UTF-8, 10 MB without a newline, or a script that closes its stdout and keeps running: the stream and
 * both log files stay well-formed and the deploy ends with the right [done] line. And process-tree cleanup,
 * checked with `ps` by a marker unique to each test: after a timeout and after a second SIGTERM to the server no
 * process of the deploy survives; after a first SIGTERM the running deploy finishes and its processes end with it.
 *
 * What the service kills (the policy these tests pin down): the process group of the running line at its
 * timeout, and of the running deploy on a second SIGTERM (a shutdown that will not wait). A child that a line
 * leaves running in the background when it exits (an app started with `app &` or `nohup`) belongs to the user:
 * neither success nor failure of the deploy kills it, and it does not hold the deploy.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeGate, StreamReader } from "../_support/gate.ts";
import {
  lastLine,
  logFiles,
  makeRepo,
  post,
  SECRET,
  startServer,
  tempDir,
  waitFor,
  type RunningServer,
  defer,
} from "../_support/helpers.ts";
import { killMarked, markerProcesses } from "../_support/hostile-fixtures.ts";

const MB = 1024 * 1024;

interface Deployed {
  /** The streamed response, byte for byte. */
  stream: Buffer;
  record: any;
  log: Buffer;
}

/** The deploy's .json (parsed: it must be valid JSON) and .log, once its record says done. */
async function filesOf(cwd: string): Promise<{ record: any; log: Buffer }> {
  const dir = join(cwd, ".service", "logs");
  const record = await waitFor(() => {
    const json = logFiles(cwd).find((f) => f.endsWith(".json"));
    if (!json) return undefined;
    const parsed = JSON.parse(readFileSync(join(dir, json), "utf8"));
    return parsed.status === "done" ? parsed : undefined;
  }, "the deploy's record to be done");
  const logs = logFiles(cwd).filter((f) => f.endsWith(".log"));
  expect(logs.length).toBe(1);
  return { record, log: readFileSync(join(dir, logs[0]!)) };
}

/** One deploy of `script` on a fresh repository and server; the stream read to its end as bytes. */
async function deployScript(script: string, env: Record<string, string> = {}): Promise<Deployed> {
  const repo = makeRepo();
  await using server = await startServer(repo.clone, {
    SERVICE_HOSTNAME: "127.0.0.1",
    SERVICE_SECRET: SECRET,
    SERVICE_RUN_SCRIPT: script,
    ...env,
  });
  const res = await post(server.url, { secret: SECRET });
  expect(res.status).toBe(200);
  const stream = Buffer.from(await res.arrayBuffer());
  const { record, log } = await filesOf(repo.clone);
  expect(logFiles(repo.clone).length).toBe(2);
  return { stream, record, log };
}

/** The stream and the .log end with the [done] line, on a line of its own; the record agrees with it. */
function expectWellFormed(deployed: Deployed, ok: boolean, exitCode: number): void {
  const done = `[done] ok=${ok} exitCode=${exitCode}`;
  for (const [what, bytes] of [
    ["stream", deployed.stream],
    [".log", deployed.log],
  ] as const) {
    const tail = bytes.subarray(Math.max(0, bytes.length - 200)).toString("latin1");
    expect({ what, ends: tail.endsWith(`\n${done}\n`) }).toEqual({ what, ends: true });
    // Exactly one [done] line, at the end.
    expect({ what, count: bytes.toString("latin1").split("[done] ").length - 1 }).toEqual({ what, count: 1 });
  }
  expect(deployed.record.status).toBe("done");
  expect(deployed.record.result.ok).toBe(ok);
  expect(deployed.record.result.run.exitCode).toBe(exitCode);
}

/** Deterministic pseudo-random bytes (xorshift32), without "://" so no URL-credential redaction can apply. */
function garbage(size: number, seed = 0x9e3779b9): Buffer {
  const out = Buffer.alloc(size);
  let x = seed >>> 0;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  for (let at = out.indexOf("://"); at >= 0; at = out.indexOf("://", at)) out[at] = 0x3b;
  return out;
}

describe("hostile output: the stream and the logs stay well-formed", () => {
  test("1 MiB from /dev/urandom: [done] ok=true, valid .json, .log ending with [done]; 1 MiB of known binary passes byte for byte into the stream and the .log", async () => {
    const random = await deployScript("head -c 1048576 /dev/urandom");
    expectWellFormed(random, true, 0);
    expect(random.stream.length).toBeGreaterThan(MB);
    expect(random.log.length).toBeGreaterThan(MB);

    const file = join(tempDir("service-garbage-"), "garbage.bin");
    const bytes = garbage(MB);
    writeFileSync(file, bytes);
    const known = await deployScript(`cat ${file}`);
    expectWellFormed(known, true, 0);
    expect(known.stream.indexOf(bytes)).toBeGreaterThan(0);
    expect(known.log.indexOf(bytes)).toBeGreaterThan(0);
    // The result's text fields are valid strings in valid JSON (parsed above), invalid sequences replaced.
    expect(typeof known.record.result.run.stdout).toBe("string");
  }, 120_000);

  test("invalid UTF-8 (lone continuation bytes, overlong and surrogate encodings, a sequence cut at the end with no newline): passed through as bytes; the JSON has U+FFFD", async () => {
    const dir = tempDir("service-utf8-");
    const script = join(dir, "bad-utf8.sh");
    // printf with octal escapes: \377\376 (never valid), \303\050 (bad continuation), \300\257 (overlong "/"),
    // \355\240\200 (a UTF-16 surrogate), and \342\202 (a three-byte sequence cut short) at the very end.
    writeFileSync(
      script,
      "#!/bin/sh\nprintf 'start \\377\\376 \\303\\050 \\300\\257 \\355\\240\\200 mid\\n'\nprintf 'cut \\342\\202'\n",
    );
    chmodSync(script, 0o755);
    const deployed = await deployScript(script);
    expectWellFormed(deployed, true, 0);
    const raw = Buffer.from([
      0x73, 0x74, 0x61, 0x72, 0x74, 0x20, 0xff, 0xfe, 0x20, 0xc3, 0x28, 0x20, 0xc0, 0xaf, 0x20, 0xed, 0xa0, 0x80, 0x20,
      0x6d, 0x69, 0x64, 0x0a,
    ]);
    for (const [what, bytes] of [
      ["stream", deployed.stream],
      [".log", deployed.log],
    ] as const) {
      expect({ what, found: bytes.indexOf(raw) >= 0 }).toEqual({ what, found: true });
      // The cut sequence is followed by the service's next line, on a line of its own.
      expect({
        what,
        found: bytes.indexOf(Buffer.from([0x63, 0x75, 0x74, 0x20, 0xe2, 0x82, 0x0a, 0x5b])) >= 0,
      }).toEqual({ what, found: true });
    }
    expect(deployed.record.result.run.stdout).toStartWith("start \uFFFD\uFFFD ");
    expect(deployed.record.result.run.stdout).toContain("cut \uFFFD");
  }, 60_000);

  test("10 MiB without a newline: the stream ends with the [done] line on its own line, the .log is cut at maxLogBytes with a mark and still ends with [done], the result keeps 1 MiB with a truncation note", async () => {
    const deployed = await deployScript("head -c 10485760 /dev/zero | tr '\\0' x");
    expectWellFormed(deployed, true, 0);
    const text = deployed.stream.toString("latin1");
    const xs = (/\nx+\n/.exec(text)?.[0].length ?? 2) - 2;
    // Everything arrived, or the stream says what it skipped for a slow reader (the .log has the rest).
    expect(xs === 10 * MB || text.includes("[stream] skipped")).toBe(true);
    // (A reader that fell behind at the very end gets the skip mark last, on its own line.)
    expect(text).toMatch(
      /x\n(\[stream\] skipped [^\n]+\n)?\[run\] exit code 0 after [\d.]+ s\n\[done\] ok=true exitCode=0\n$/,
    );
    expect(deployed.log.toString("latin1")).toContain("[log] truncated: the output passed maxLogBytes");
    expect(deployed.record.result.run.stdout.length).toBeLessThan(MB + 200);
    expect(deployed.record.result.run.stdout).toContain("[truncated: ");
  }, 120_000);

  test("a script that closes its stdout (or both outputs) and keeps running: the deploy waits for its exit and ends with its exit code", async () => {
    const closed = await deployScript("printf 'partial'; exec >&-; sleep 2; exit 0");
    expectWellFormed(closed, true, 0);
    expect(closed.stream.toString("latin1")).toMatch(/partial\n\[run\] exit code 0 after [\d.]+ s\n/);
    expect(closed.record.result.run.stdout).toBe("partial");

    const both = await deployScript("echo before; exec >&- 2>&-; sleep 1; exit 3");
    expectWellFormed(both, false, 3);
    expect(both.stream.toString("latin1")).toContain("before\n");
    expect(both.stream.toString("latin1")).toContain("[run] exit code 3 after ");
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------------------
// Process trees.

/**
 * A script whose every process carries `marker` in its command line (`sh <dir>/<marker>.sh <role>`):
 * top → mid → two leaves, a child that ignores SIGTERM (with a leaf of its own, ignoring it too), and an
 * orphan left by a double fork (reparented to init, still in the deploy's process group). Leaves loop until
 * `$GATE_FILE` exists (forever when it is never written).
 */
function treeScript(): { marker: string; script: string; env: Record<string, string>; started: () => string[] } {
  const marker = `hostile-tree-${crypto.randomUUID()}`;
  const dir = tempDir("service-tree-");
  const script = join(dir, `${marker}.sh`);
  const log = join(dir, "started.log");
  writeFileSync(
    script,
    [
      "#!/bin/sh",
      'echo "$1 $$" >> "$TREE_LOG"',
      'case "$1" in',
      "  top)",
      '    sh "$0" mid &',
      '    sh "$0" stubborn &',
      '    ( sh "$0" leaf & ) &',
      '    echo "tree started"',
      "    wait",
      "    ;;",
      "  mid)",
      '    sh "$0" leaf &',
      '    sh "$0" leaf',
      "    wait",
      "    ;;",
      "  stubborn)",
      "    trap '' TERM",
      '    sh "$0" leaf',
      "    ;;",
      "  leaf)",
      '    while [ ! -f "$GATE_FILE" ]; do sleep 0.1; done',
      "    ;;",
      "esac",
      "",
    ].join("\n"),
  );
  const started = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
  return { marker, script, env: { TREE_LOG: log }, started };
}

/** top, mid, 2 leaves of mid, stubborn, its leaf, the orphan. */
const TREE_SIZE = 7;

/**
 * `await using tree = await treeServer(extra)`: a server deploying the process tree of `treeScript` (`extra` added
 * to its environment), whose leaves wait for the gate. When the block ends the gate opens, what is left of the
 * tree is killed and the server stops.
 */
async function treeServer(extra: Record<string, string> = {}) {
  const tree = treeScript();
  const gate = makeGate();
  const repo = makeRepo();
  const server = await startServer(repo.clone, {
    SERVICE_HOSTNAME: "127.0.0.1",
    SERVICE_SECRET: SECRET,
    SERVICE_RUN_SCRIPT: `sh ${tree.script} top`,
    ...extra,
    ...tree.env,
    ...gate.env,
  });
  return {
    ...tree,
    gate,
    repo,
    server,
    async [Symbol.asyncDispose]() {
      gate.open();
      killMarked(tree.marker);
      await server.stop();
    },
  };
}

/**
 * A server deploying the process tree of `treeScript`, sent one SIGTERM once the whole tree runs and the server
 * says it is draining; `body` goes on from there. Whatever happens, the tree and the server end afterwards.
 */
async function afterFirstSigterm(
  body: (context: {
    server: RunningServer;
    reader: StreamReader;
    marker: string;
    repo: ReturnType<typeof makeRepo>;
    gate: ReturnType<typeof makeGate>;
  }) => Promise<void>,
): Promise<void> {
  await using tree = await treeServer();
  const { server, marker, repo, gate } = tree;
  const reader = new StreamReader(await post(server.url, { secret: SECRET }));
  await waitFor(
    () => reader.text.includes("tree started") && markerProcesses(marker).length >= TREE_SIZE,
    "the whole tree to run",
  );
  server.proc.kill("SIGTERM");
  await waitFor(
    () => `${server.stdout.text}${server.stderr.text}`.includes("SIGTERM: accepting no new deploys"),
    "the server to start draining",
  );
  await body({ server, reader, marker, repo, gate });
}

describe("process-tree cleanup (checked with ps by a unique marker)", () => {
  test("a run script that times out: its whole tree is killed (a grandchild ignoring SIGTERM and an orphan of a double fork included); [done] ok=false", async () => {
    await using tree = await treeServer({ SERVICE_RUN_TIMEOUT_MS: "5000" });
    const { marker, started, repo, server } = tree;
    const text = await new StreamReader(await post(server.url, { secret: SECRET })).done;
    expect(text).toContain("[run] timed out after 5000 ms");
    expect(lastLine(text)).toMatch(/^\[done\] ok=false exitCode=\d+$/);
    // The whole tree had started before the timeout (each process records itself as it starts)…
    expect(
      started()
        .map((line) => line.split(" ")[0])
        .sort(),
    ).toEqual(["leaf", "leaf", "leaf", "leaf", "mid", "stubborn", "top"]);
    // …and none of it survives.
    await waitFor(
      () => markerProcesses(marker).length === 0,
      `no process with ${marker} (left: ${JSON.stringify(markerProcesses(marker))})`,
    );
    const { record } = await filesOf(repo.clone);
    expect(record.result.run.timedOut).toBe(true);
  }, 60_000);

  test(
    "SIGTERM once while a deploy runs: new POSTs get 503, the running deploy finishes ([done] ok=true), its tree ends with it, the server exits 0",
    () =>
      afterFirstSigterm(async ({ server, reader, marker, repo, gate }) => {
        const refused = await post(server.url, { secret: SECRET });
        expect(refused.status).toBe(503);
        await refused.text();
        // Still running: the first SIGTERM kills nothing.
        expect(markerProcesses(marker).length).toBeGreaterThanOrEqual(TREE_SIZE);
        expect(server.proc.exitCode).toBeNull();
        gate.open();
        expect(lastLine(await reader.done)).toBe("[done] ok=true exitCode=0");
        expect(await server.proc.exited).toBe(0);
        await waitFor(() => markerProcesses(marker).length === 0, `no process with ${marker}`);
        expect(logFiles(repo.clone).length).toBe(2);
      }),
    60_000,
  );

  test(
    "SIGTERM twice while a deploy runs: the second kills the deploy's whole tree (a child ignoring SIGTERM and a double-forked orphan included) and the server exits 1",
    () =>
      afterFirstSigterm(async ({ server, reader, marker, repo }) => {
        expect(markerProcesses(marker).length).toBeGreaterThanOrEqual(TREE_SIZE);
        server.proc.kill("SIGTERM");
        expect(await server.proc.exited).toBe(1);
        await waitFor(
          () => markerProcesses(marker).length === 0,
          `no process with ${marker} (left: ${JSON.stringify(markerProcesses(marker))})`,
        );
        // The client's stream ended; when its last line made it out before the exit, it says the deploy failed.
        const text = await reader.done;
        if (text.includes("[done]")) expect(lastLine(text)).toMatch(/^\[done\] ok=false exitCode=\d+$/);
        expect(logFiles(repo.clone).length).toBe(2);
      }),
    60_000,
  );

  test("policy: a child a line leaves in the background is the user's: a failing deploy ends ([done] ok=false exitCode=3) without waiting for it and without killing it", async () => {
    const { marker, script, env } = treeScript();
    const gate = makeGate();
    using _cleanup = defer(() => {
      gate.open();
      killMarked(marker);
    });
    const deployed = await deployScript(`sh ${script} leaf &\nsh -c 'echo failing; exit 3'`, { ...env, ...gate.env });
    expectWellFormed(deployed, false, 3);
    expect(markerProcesses(marker).length).toBe(1);
    // It ends when its own condition says so.
    gate.open();
    await waitFor(() => markerProcesses(marker).length === 0, `the background child ${marker} to end by itself`);
  }, 60_000);
});
