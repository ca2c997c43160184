/**
 * `bun run bench`: measures the service side by side with adnanh/webhook (Debian package `webhook`) and with the
 * bare commands run by `sh`, on the same repositories (a bare remote and a clone in a temp dir), and prints
 * every figure against its target (issue 7), first as an aligned table, then as Markdown for the README.
 *
 * The service runs as the compiled binary (dist/service; built first when missing or older than src/). Every
 * case starts its own server, so each peak RSS (VmHWM) belongs to that case alone. Every step is bounded in
 * time; every process started here (and any process left running in the temp dir) is killed at the end.
 *
 * Usage: bun run bench [--no-build] [--only start,unauthorized,latency,burst,stream,signed]   (BENCH_BIN=<binary> to measure another build)
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { cpus, totalmem, tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
/** The binary measured: dist/service (built when stale), or BENCH_BIN to compare another build. */
const BIN = process.env.BENCH_BIN ? resolve(process.env.BENCH_BIN) : join(ROOT, "dist", "service");
const SECRET = "bench-secret-0123456789abcdef";
const WRONG = "wrong-secret-0123456789abcdef";
const MB = 1024 * 1024;
const STREAM_BYTES = 100 * MB;
/** 80-byte lines: `yes` is a generator that is neither Bun nor Node, and fast (the pipe, not it, is the limit). */
const GENERATOR = `yes ${"x".repeat(79)} | head -c ${STREAM_BYTES}`;
const LATENCY_RUNS = 50;
const START_RUNS = 15;
const BURST = 200;
const STREAM_RUNS = 3;
const WRK_SECONDS = 5;
const WRK_ROUNDS = 2;
/** The whole run is cut (with cleanup) after this. */
const BENCH_DEADLINE_MS = 7 * 60_000;

// ---------------------------------------------------------------------------------------------- plumbing

const tmpRoot = realpathSync(mkdtempSync(join(tmpdir(), "service-bench-")));
const started = new Set<Bun.Subprocess>();
const startedAt = performance.now();

const log = (message: string) => process.stderr.write(`[bench ${((performance.now() - startedAt) / 1000).toFixed(1).padStart(5)} s] ${message}\n`);
const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
const median = (values: number[]) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function which(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const file = join(dir || ".", command);
    try {
      if (statSync(file).isFile()) return file;
    } catch {}
  }
  return undefined;
}

/** The environment of every process started here: no SERVICE_* or GIT_* from outside, a fixed git identity. */
function benchEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("SERVICE_") && !key.startsWith("GIT_")) env[key] = value;
  }
  return {
    ...env,
    NO_COLOR: "1",
    CI: "1",
    SERVICE_SKIP_HTTPS_PROMPT: "1",
    GIT_AUTHOR_NAME: "Bench",
    GIT_AUTHOR_EMAIL: "bench@example.com",
    GIT_COMMITTER_NAME: "Bench",
    GIT_COMMITTER_EMAIL: "bench@example.com",
    GIT_CONFIG_NOSYSTEM: "1",
    ...extra,
  };
}

function git(cwd: string, ...args: string[]): string {
  const result = Bun.spawnSync(["git", ...args], { cwd, env: benchEnv(), stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${result.stderr.toString()}`);
  return result.stdout.toString().trim();
}

/** A bare remote with one commit and a clone of it (the deployed checkout, always up to date). */
function makeRepo(name: string): { remote: string; clone: string } {
  const dir = join(tmpRoot, name);
  mkdirSync(dir, { recursive: true });
  const remote = join(dir, "remote.git");
  const clone = join(dir, "app");
  const pusher = join(dir, "pusher");
  git(dir, "init", "--quiet", "--bare", "--initial-branch=main", remote);
  git(dir, "clone", "--quiet", remote, pusher);
  git(pusher, "checkout", "--quiet", "-B", "main");
  writeFileSync(join(pusher, "README.md"), "app\n");
  git(pusher, "add", "-A");
  git(pusher, "commit", "--quiet", "-m", "initial");
  git(pusher, "push", "--quiet", "origin", "main");
  git(dir, "clone", "--quiet", remote, clone);
  return { remote, clone };
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Resolves once a TCP connect to the port succeeds (tried back to back, so the first moment is caught). */
async function waitForListen(port: number, timeoutMs: number, alive: () => boolean): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((done) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        done(true);
      });
      socket.once("error", () => {
        socket.destroy();
        done(false);
      });
    });
    if (ok) return;
    if (!alive()) throw new Error(`the server on port ${port} exited before it listened`);
    if (performance.now() > deadline) throw new Error(`nothing listened on port ${port} within ${timeoutMs} ms`);
  }
}

function procStatus(pid: number): { rss: number; hwm: number; anon: number; file: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { rss: kb("VmRSS") * 1024, hwm: kb("VmHWM") * 1024, anon: kb("RssAnon") * 1024, file: kb("RssFile") * 1024 };
  } catch {
    return undefined;
  }
}

/**
 * Samples VmRSS every 10 ms; `stop` returns the largest sample, the kernel's own peak (VmHWM), and how the
 * largest sample split into anonymous memory (heaps) and file-backed pages (the executable's code).
 */
function rssSampler(pid: number): { stop(): { peak: number; hwm: number; split: string } } {
  let peak = 0;
  let split = "";
  const sample = () => {
    const status = procStatus(pid);
    if (status && status.rss > peak) {
      peak = status.rss;
      split = `${fmtMB(status.anon)} anonymous + ${fmtMB(status.file)} file-backed`;
    }
  };
  sample();
  const timer = setInterval(sample, 10);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { peak, hwm: procStatus(pid)?.hwm ?? NaN, split };
    },
  };
}

/** Drains a child's output pipe, keeping the last few KiB (for error messages). */
function drain(stream: ReadableStream<Uint8Array> | number | undefined, into: { text: string }): void {
  if (!stream || typeof stream === "number") return;
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of stream) into.text = (into.text + decoder.decode(chunk, { stream: true })).slice(-8192);
    } catch {}
  })();
}

interface Server {
  name: string;
  pid: number;
  port: number;
  url: string;
  cwd: string;
  proc: Bun.Subprocess;
  output: { text: string };
  stop(): Promise<void>;
}

async function stopProcess(proc: Bun.Subprocess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) {
    started.delete(proc);
    return;
  }
  proc.kill("SIGTERM");
  const exited = await Promise.race([proc.exited.then(() => true), sleep(5000).then(() => false)]);
  if (!exited) {
    proc.kill("SIGKILL");
    await Promise.race([proc.exited, sleep(2000)]);
  }
  started.delete(proc);
}

let serverCount = 0;

/** The compiled service in a fresh working directory (its own logs), listening on 127.0.0.1. */
async function startService(repo: string, runScript: string, extra: Record<string, string> = {}): Promise<Server> {
  const cwd = join(tmpRoot, `service-${++serverCount}`);
  mkdirSync(cwd, { recursive: true });
  const port = await freePort();
  const env = benchEnv({
    SERVICE_PORT: String(port),
    SERVICE_HOSTNAME: "127.0.0.1",
    SERVICE_SECRET: SECRET,
    SERVICE_REPO_PATH: repo,
    SERVICE_RUN_SCRIPT: runScript,
    ...extra,
  });
  return launch("service", [BIN], cwd, env, port, "/");
}

interface Hook {
  id: string;
  script: string;
}

/** adnanh/webhook with one hook per case: a header-value rule on X-Service-Secret, `sh -c 'git pull && <script>'`. */
async function startWebhook(repo: string, hooks: Hook[]): Promise<Server> {
  const cwd = join(tmpRoot, `webhook-${++serverCount}`);
  mkdirSync(cwd, { recursive: true });
  const file = join(cwd, "hooks.json");
  writeFileSync(
    file,
    JSON.stringify(
      hooks.map((hook) => ({
        id: hook.id,
        "execute-command": "/bin/sh",
        "command-working-directory": repo,
        "pass-arguments-to-command": [
          { source: "string", name: "-c" },
          { source: "string", name: `git pull && ${hook.script}` },
        ],
        "include-command-output-in-response": true,
        "include-command-output-in-response-on-error": true,
        "trigger-rule-mismatch-http-response-code": 401,
        "trigger-rule": { match: { type: "value", value: SECRET, parameter: { source: "header", name: "X-Service-Secret" } } },
      })),
      null,
      2,
    ),
  );
  const port = await freePort();
  return launch("webhook", ["webhook", "-hooks", file, "-ip", "127.0.0.1", "-port", String(port), "-http-methods", "POST"], cwd, benchEnv(), port, "/hooks/");
}

/** Starts a server process, collects its output, and waits until it accepts connections on `port`. */
async function launch(name: string, argv: string[], cwd: string, env: Record<string, string>, port: number, path: string): Promise<Server> {
  const proc = Bun.spawn(argv, { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  started.add(proc);
  const output = { text: "" };
  drain(proc.stdout, output);
  drain(proc.stderr, output);
  try {
    await waitForListen(port, 10_000, () => proc.exitCode === null);
  } catch (error) {
    await stopProcess(proc);
    throw new Error(`${(error as Error).message}: ${output.text}`);
  }
  return { name, pid: proc.pid, port, url: `http://127.0.0.1:${port}${path}`, cwd, proc, output, stop: () => stopProcess(proc) };
}

/** Kills what is left: our children, then any process whose working directory is in the temp dir (deploy scripts). */
async function cleanup(): Promise<void> {
  await Promise.all([...started].map((proc) => stopProcess(proc).catch(() => {})));
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`).startsWith(tmpRoot)) process.kill(Number(entry), "SIGKILL");
    } catch {}
  }
  rmSync(tmpRoot, { recursive: true, force: true });
}

const post = (url: string, secret = SECRET) => fetch(url, { method: "POST", headers: { "x-service-secret": secret } });

const lastLine = (text: string) => text.trimEnd().split("\n").pop() ?? "";

// ---------------------------------------------------------------------------------------------- results

type Verdict = "PASS" | "MISS" | "n/a" | "info";

interface Row {
  figure: string;
  target: string;
  ours: string;
  peer: string;
  ratio: string;
  result: Verdict;
}

const rows: Row[] = [];
const notes: string[] = [];
const row = (figure: string, target: string, ours: string, peer: string, ratio: string, pass: boolean | undefined) =>
  rows.push({ figure, target, ours, peer, ratio, result: pass === undefined ? "info" : pass ? "PASS" : "MISS" });
const na = (figure: string, target: string, why: string) => {
  rows.push({ figure, target, ours: "n/a", peer: "n/a", ratio: "n/a", result: "n/a" });
  notes.push(`${figure}: ${why}`);
};
const fmtMB = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
const fmtMs = (ms: number) => `${ms.toFixed(1)} ms`;
const fmtX = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : "n/a");

// ---------------------------------------------------------------------------------------------- the machine

function machine(): string[] {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? "unknown";
  const nproc = Bun.spawnSync(["nproc"]).stdout.toString().trim() || String(cpus().length);
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const version = (argv: string[]) => {
    try {
      const result = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
      return `${result.stdout}${result.stderr}`.trim().split("\n")[0] ?? "?";
    } catch {
      return "missing";
    }
  };
  return [
    `machine: ${nproc} cores (${model}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB memory, load average ${load}, ${process.platform}/${process.arch}, kernel ${readFileSync("/proc/sys/kernel/osrelease", "utf8").trim()}`,
    `service: dist/service (Bun ${Bun.version}, compiled); peer: ${which("webhook") ? version(["webhook", "-version"]) : "webhook missing"}; ${which("wrk") ? version(["wrk", "-v"]) : "wrk missing"}; ${version(["git", "--version"])}`,
  ];
}

// ---------------------------------------------------------------------------------------------- build

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

async function ensureBinary(): Promise<void> {
  if (process.env.BENCH_BIN) {
    if (!existsSync(BIN)) throw new Error(`BENCH_BIN ${BIN} does not exist`);
    return;
  }
  const stale = !existsSync(BIN) || statSync(BIN).mtimeMs < newestMtime(join(ROOT, "src"));
  if (!stale) return;
  if (process.argv.includes("--no-build")) throw new Error("dist/service is missing or older than src/ (run `bun scripts/build.ts --only-host`)");
  log("building dist/service (bun scripts/build.ts --only-host)");
  const proc = Bun.spawn([process.execPath, join(ROOT, "scripts", "build.ts"), "--only-host"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  started.add(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), 180_000);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  started.delete(proc);
  if (code !== 0) throw new Error(`the build failed:\n${out}${err}`);
}

// ---------------------------------------------------------------------------------------------- the cases

/** Start to listening (compiled binary, median of START_RUNS) and idle memory. */
async function startAndIdle(repo: string, hasWebhook: boolean): Promise<void> {
  log(`start to listening: ${START_RUNS} starts of each`);
  const cwd = join(tmpRoot, "starts");
  mkdirSync(cwd, { recursive: true });
  const hooks = join(cwd, "hooks.json");
  writeFileSync(hooks, JSON.stringify([{ id: "true", "execute-command": "/bin/true" }]));
  const timeStart = async (argv: string[], port: number, env: Record<string, string>): Promise<number> => {
    const t0 = performance.now();
    const proc = Bun.spawn(argv, { cwd, env, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    started.add(proc);
    try {
      await waitForListen(port, 5000, () => proc.exitCode === null);
      return performance.now() - t0;
    } finally {
      await stopProcess(proc);
    }
  };
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let i = 0; i < START_RUNS; i++) {
    const port = await freePort();
    ours.push(await timeStart([BIN], port, benchEnv({ SERVICE_PORT: String(port), SERVICE_HOSTNAME: "127.0.0.1", SERVICE_SECRET: SECRET, SERVICE_REPO_PATH: repo, SERVICE_RUN_SCRIPT: "true" })));
    if (hasWebhook) {
      const port2 = await freePort();
      theirs.push(await timeStart(["webhook", "-hooks", hooks, "-ip", "127.0.0.1", "-port", String(port2)], port2, benchEnv()));
    }
  }
  const ourStart = median(ours);
  const theirStart = hasWebhook ? median(theirs) : NaN;
  row(
    "start to listening (median of 15)",
    "≤ 30 ms",
    fmtMs(ourStart),
    hasWebhook ? fmtMs(theirStart) : "n/a",
    hasWebhook ? fmtX(ourStart / theirStart) : "n/a",
    ourStart <= 30,
  );

  log("idle memory");
  const server = await startService(repo, "true");
  let webhook: Server | undefined;
  try {
    if (hasWebhook) webhook = await startWebhook(repo, [{ id: "true", script: "true" }]);
    await sleep(1000);
    const status = procStatus(server.pid);
    const ourRss = status?.rss ?? NaN;
    if (status) notes.push(`idle memory: ${fmtMB(status.anon)} anonymous + ${fmtMB(status.file)} file-backed (pages of the 107 MB executable: Bun's runtime and the JS it embeds)`);
    const theirRss = webhook ? (procStatus(webhook.pid)?.rss ?? NaN) : NaN;
    row("idle memory (VmRSS 1 s after start)", "≤ 35 MB", fmtMB(ourRss), webhook ? fmtMB(theirRss) : "n/a", webhook ? fmtX(ourRss / theirRss) : "n/a", ourRss <= 35 * MB);
  } finally {
    await server.stop();
    await webhook?.stop();
  }
}

/**
 * wrk, 32 connections, wrong secret; WRK_ROUNDS rounds each, alternating. All from 127.0.0.1: past the
 * service's failed-authentication burst its answers are 429 (the backoff), so the figure is the cost of
 * refusing a flood from one address; webhook answers every one 401.
 */
async function unauthorized(repo: string, hasWebhook: boolean, hasWrk: boolean): Promise<void> {
  const figure = `unauthorized POSTs/s, one address (wrk -c32, ${WRK_SECONDS} s, median of ${WRK_ROUNDS}; service: 429 past the burst)`;
  if (!hasWrk || !hasWebhook) {
    na(figure, "≥ 2× adnanh/webhook", `needs ${[!hasWrk && "wrk", !hasWebhook && "webhook"].filter(Boolean).join(" and ")}`);
    return;
  }
  log("unauthorized POSTs/s: wrk against each, alternating");
  const script = join(tmpRoot, "wrong-secret.lua");
  writeFileSync(script, `wrk.method = "POST"\nwrk.headers["X-Service-Secret"] = "${WRONG}"\n`);
  const server = await startService(repo, "true");
  const webhook = await startWebhook(repo, [{ id: "true", script: "true" }]);
  try {
    for (const [url, name] of [[server.url, "service"], [`${webhook.url}true`, "webhook"]] as const) {
      const response = await post(url, WRONG);
      await response.arrayBuffer();
      if (response.status !== 401) throw new Error(`${name} answered ${response.status} to a wrong secret`);
    }
    const wrk = async (url: string): Promise<{ rps: number; non2xx: number; errors: string }> => {
      const proc = Bun.spawn(["wrk", "-t2", "-c32", `-d${WRK_SECONDS}s`, "--timeout", "5s", "-s", script, url], { stdout: "pipe", stderr: "pipe", env: benchEnv() });
      started.add(proc);
      const timer = setTimeout(() => proc.kill("SIGKILL"), (WRK_SECONDS + 20) * 1000);
      const [out, , code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      clearTimeout(timer);
      started.delete(proc);
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
      if (code !== 0 || !Number.isFinite(rps)) throw new Error(`wrk failed (${code}): ${out}`);
      const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
      const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
      if (non2xx < requests * 0.99) throw new Error(`wrk got ${requests - non2xx} of ${requests} answers that were not 401 or 429 from ${url}`);
      return { rps, non2xx, errors: /Socket errors:.*/.exec(out)?.[0] ?? "" };
    };
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let round = 0; round < WRK_ROUNDS; round++) {
      const a = await wrk(server.url);
      ours.push(a.rps);
      const b = await wrk(`${webhook.url}true`);
      theirs.push(b.rps);
      for (const [name, r] of [["service", a], ["webhook", b]] as const) if (r.errors) notes.push(`wrk against ${name}: ${r.errors}`);
    }
    const after = await post(server.url, WRONG);
    await after.arrayBuffer();
    notes.push(`unauthorized POSTs/s: after the flood the service answers a wrong secret from the same address ${after.status} (429 is the failed-authentication backoff)`);
    // The ceiling of any Bun handler here: Bun.serve answering the same 401 body at once, no work at all.
    const reference = join(tmpRoot, "bun-401.ts");
    const refPort = await freePort();
    writeFileSync(
      reference,
      `const body = ${JSON.stringify(`${JSON.stringify({ error: "unauthorized", message: "missing or wrong secret" })}\n`)};\n` +
        `Bun.serve({ port: ${refPort}, hostname: "127.0.0.1", development: false, fetch: () => new Response(body, { status: 401, headers: { "content-type": "application/json; charset=utf-8" } }) });\n`,
    );
    const refProc = Bun.spawn([process.execPath, reference], { stdin: "ignore", stdout: "ignore", stderr: "ignore", env: benchEnv() });
    started.add(refProc);
    try {
      await waitForListen(refPort, 10_000, () => refProc.exitCode === null);
      const ref = await wrk(`http://127.0.0.1:${refPort}/`);
      notes.push(`unauthorized POSTs/s reference: a bare Bun.serve answering 401 at once (no routing, no config, no secret check) does ${ref.rps.toFixed(0)}/s here, ${(ref.rps / median(theirs)).toFixed(2)}× adnanh/webhook: the most any Bun handler gets with wrk on the same cores`);
    } finally {
      await stopProcess(refProc);
    }
    const o = median(ours);
    const t = median(theirs);
    notes.push(`unauthorized POSTs/s per round: service ${ours.map((v) => v.toFixed(0)).join(", ")}; webhook ${theirs.map((v) => v.toFixed(0)).join(", ")}`);
    row(figure, "≥ 2× adnanh/webhook", `${o.toFixed(0)}/s`, `${t.toFixed(0)}/s`, fmtX(o / t), o >= 2 * t);
  } finally {
    await server.stop();
    await webhook.stop();
  }
}

/** Sequential deploys of an up-to-date repo with run script `true`; the three runners interleaved. */
async function latency(repo: string, hasWebhook: boolean): Promise<void> {
  log(`deploy latency: ${LATENCY_RUNS} sequential deploys each (service, webhook, bare sh), interleaved`);
  const server = await startService(repo, "true");
  const webhook = hasWebhook ? await startWebhook(repo, [{ id: "true", script: "true" }]) : undefined;
  try {
    const ours = async () => {
      const t0 = performance.now();
      const response = await post(server.url);
      const text = await response.text();
      const ms = performance.now() - t0;
      if (!lastLine(text).startsWith("[done] ok=true")) throw new Error(`a deploy did not end ok:\n${text}`);
      return ms;
    };
    const theirs = async () => {
      const t0 = performance.now();
      const response = await post(`${webhook!.url}true`);
      const text = await response.text();
      const ms = performance.now() - t0;
      if (response.status !== 200) throw new Error(`webhook answered ${response.status}: ${text}`);
      return ms;
    };
    const bare = async () => {
      const t0 = performance.now();
      const proc = Bun.spawn(["sh", "-c", "git pull && true"], { cwd: repo, env: benchEnv(), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      started.add(proc);
      const [, , code] = await Promise.all([new Response(proc.stdout).arrayBuffer(), new Response(proc.stderr).arrayBuffer(), proc.exited]);
      const ms = performance.now() - t0;
      started.delete(proc);
      if (code !== 0) throw new Error(`bare git pull && true exited ${code}`);
      return ms;
    };
    const times = { ours: [] as number[], theirs: [] as number[], bare: [] as number[] };
    for (let i = 0; i < LATENCY_RUNS + 3; i++) {
      const o = await bounded(ours(), 30_000, "a deploy");
      const t = webhook ? await bounded(theirs(), 30_000, "a webhook deploy") : NaN;
      const b = await bounded(bare(), 30_000, "a bare git pull");
      if (i < 3) continue; // warm-up
      times.ours.push(o);
      times.theirs.push(t);
      times.bare.push(b);
    }
    const o = median(times.ours);
    const t = webhook ? median(times.theirs) : NaN;
    const b = median(times.bare);
    row("deploy latency p50 vs adnanh/webhook", "≤ adnanh/webhook's", fmtMs(o), webhook ? fmtMs(t) : "n/a", webhook ? fmtX(o / t) : "n/a", webhook ? o <= t : undefined);
    row("deploy latency p50 vs bare `git pull && true`", "≤ bare + 5 ms", fmtMs(o), `${fmtMs(b)} (+${fmtMs(o - b)})`, fmtX(o / b), o <= b + 5);
    const durations = doneRecords(server.cwd).map((r) => r.durationMs);
    notes.push(`deploy latency: the service's own durationMs (JSON log: HEAD, pull, script, from start to [done]) has median ${fmtMs(median(durations))}; the rest of its ${fmtMs(o)} is HTTP, the per-POST config reload, the queue and the log files`);
    const p90 = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length * 0.9)] ?? NaN;
    notes.push(`deploy latency p90: service ${fmtMs(p90(times.ours))}, webhook ${webhook ? fmtMs(p90(times.theirs)) : "n/a"}, bare ${fmtMs(p90(times.bare))}`);
  } finally {
    await server.stop();
    await webhook?.stop();
  }
}

/** Start/end intervals written by the burst script, and how many runs overlap an earlier one. */
function overlaps(file: string): { runs: number; overlapping: number } {
  const intervals = existsSync(file)
    ? readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(" ").map(Number) as [number, number])
        .sort((a, b) => a[0] - b[0])
    : [];
  let overlapping = 0;
  let lastEnd = -Infinity;
  for (const [start, end] of intervals) {
    if (start < lastEnd) overlapping++;
    lastEnd = Math.max(lastEnd, end);
  }
  return { runs: intervals.length, overlapping };
}

/** BURST concurrent authorized POSTs on one repo; the script records its start and end. */
async function burst(repo: string, hasWebhook: boolean): Promise<void> {
  log(`burst: ${BURST} concurrent deploys on one repo`);
  const script = (file: string) => `s=$(date +%s%N) && sleep 0.01 && echo "$s $(date +%s%N)" >> ${file}`;
  const ourFile = join(tmpRoot, "burst-service.txt");
  const theirFile = join(tmpRoot, "burst-webhook.txt");
  const server = await startService(repo, script(ourFile), { SERVICE_QUEUE_LIMIT: "250" });
  try {
    await sleep(300);
    const before = procStatus(server.pid)?.rss ?? NaN;
    const sampler = rssSampler(server.pid);
    const t0 = performance.now();
    const texts = await bounded(
      Promise.all(Array.from({ length: BURST }, () => post(server.url).then((r) => r.text()).catch((e: Error) => `fetch failed: ${e.message}`))),
      150_000,
      "the burst",
    );
    const seconds = (performance.now() - t0) / 1000;
    const { peak, hwm, split } = sampler.stop();
    const ok = texts.filter((text) => lastLine(text).startsWith("[done] ok=true")).length;
    const ours = overlaps(ourFile);
    notes.push(`burst: service took ${seconds.toFixed(1)} s for ${BURST} deploys (${((seconds * 1000) / BURST).toFixed(1)} ms each, one at a time); RSS ${fmtMB(before)} before, sampled peak ${fmtMB(peak)} (${split}), VmHWM ${fmtMB(hwm)}`);
    let theirs: { runs: number; overlapping: number; ok: number; seconds: number } | undefined;
    if (hasWebhook) {
      const webhook = await startWebhook(repo, [{ id: "burst", script: script(theirFile) }]);
      try {
        const t1 = performance.now();
        const statuses = await bounded(
          Promise.all(
            Array.from({ length: BURST }, () =>
              post(`${webhook.url}burst`)
                .then(async (r) => ({ status: r.status, text: await r.text() }))
                .catch((e: Error) => ({ status: 0, text: e.message })),
            ),
          ),
          150_000,
          "the webhook burst",
        );
        theirs = { ...overlaps(theirFile), ok: statuses.filter((r) => r.status === 200).length, seconds: (performance.now() - t1) / 1000 };
        // Why the others failed: the most common last line of their output.
        const reasons = new Map<string, number>();
        for (const r of statuses.filter((r) => r.status !== 200)) {
          const reason = `${r.status}: ${lastLine(r.text).slice(0, 100)}`;
          reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
        }
        const [topReason, topCount] = [...reasons].sort((a, b) => b[1] - a[1])[0] ?? ["", 0];
        notes.push(
          `burst: adnanh/webhook ran all ${BURST} at once in ${theirs.seconds.toFixed(1)} s: ${theirs.ok}/${BURST} answered 200` +
            (topCount ? ` (of the others ${topCount} said "${topReason}": the concurrent git pulls trip over each other)` : "") +
            `; ${theirs.runs} scripts ran, ${theirs.overlapping} of them overlapping another`,
        );
      } finally {
        await webhook.stop();
      }
    }
    row("burst: deploys ending `[done] ok=true`", `${BURST}/${BURST}`, `${ok}/${BURST}`, theirs ? `${theirs.ok}/${BURST} (HTTP 200)` : "n/a", "", ok === BURST);
    row("burst: overlapping runs", "0", `${ours.overlapping} of ${ours.runs}`, theirs ? `${theirs.overlapping} of ${theirs.runs}` : "n/a", "", ours.overlapping === 0 && ours.runs === BURST);
    const growth = Math.max(peak, hwm) - before;
    row("burst: server RSS growth (peak − before)", "≤ 30 MB", fmtMB(growth), "", "", growth <= 30 * MB);
  } finally {
    await server.stop();
  }
}

/**
 * BURST concurrent authorized POSTs on one repo with `queuePolicy: latest`: the first deploy runs, the next one
 * waits and every later request joins it, so at most 2 deploys run and every client still gets `[done]`.
 */
async function latestBurst(repo: string): Promise<void> {
  log(`latest: ${BURST} concurrent deploys on one repo, queuePolicy latest`);
  const file = join(tmpRoot, "burst-latest.txt");
  const server = await startService(repo, `s=$(date +%s%N) && sleep 0.2 && echo "$s $(date +%s%N)" >> ${file}`, { SERVICE_QUEUE_POLICY: "latest" });
  try {
    await sleep(300);
    const before = procStatus(server.pid)?.rss ?? NaN;
    const sampler = rssSampler(server.pid);
    const t0 = performance.now();
    const texts = await bounded(
      Promise.all(Array.from({ length: BURST }, () => post(server.url).then((r) => r.text()).catch((e: Error) => `fetch failed: ${e.message}`))),
      150_000,
      "the latest burst",
    );
    const seconds = (performance.now() - t0) / 1000;
    const { peak, hwm, split } = sampler.stop();
    const ok = texts.filter((text) => lastLine(text).startsWith("[done] ok=true")).length;
    const { runs, overlapping } = overlaps(file);
    notes.push(`latest: ${BURST} requests served in ${seconds.toFixed(1)} s by ${runs} deploys; RSS ${fmtMB(before)} before, sampled peak ${fmtMB(peak)} (${split}), VmHWM ${fmtMB(hwm)}`);
    row("latest: deploys run for the burst", "≤ 2", `${runs}`, "", "", runs <= 2 && overlapping === 0);
    row("latest: clients ending `[done] ok=true`", `${BURST}/${BURST}`, `${ok}/${BURST}`, "", "", ok === BURST);
    const growth = Math.max(peak, hwm) - before;
    row("latest: server RSS growth (peak − before)", "≤ 30 MB", fmtMB(growth), "", "", growth <= 30 * MB);
  } finally {
    await server.stop();
  }
}

const FLOOD_CLIENTS = 200;
const FLOOD_BODY_BYTES = 25 * MB;

/**
 * One client without the secret: a signed head (a wrong signature) and a FLOOD_BODY_BYTES body sent as fast as
 * the server takes it, stopping once the answer is in. Resolves with the status (0: closed without one).
 */
function signedFloodClient(port: number): Promise<number> {
  return new Promise((done) => {
    const socket = connect(port, "127.0.0.1");
    const piece = Buffer.alloc(256 * 1024, 0x7b);
    let received = "";
    let answered = false;
    let drained: (() => void) | undefined;
    const finish = () => {
      if (answered) return;
      answered = true;
      socket.destroy();
      drained?.();
      done(Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0));
    };
    socket.on("error", finish);
    socket.on("close", finish);
    socket.on("drain", () => drained?.());
    socket.on("data", (data: Buffer) => {
      received += data.toString("latin1");
      const head = received.indexOf("\r\n\r\n");
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(received)?.[1] ?? NaN);
      if (head >= 0 && received.length - head - 4 >= length) finish();
    });
    socket.on("connect", async () => {
      socket.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Hub-Signature-256: sha256=${"0".repeat(64)}\r\nContent-Length: ${FLOOD_BODY_BYTES}\r\n\r\n`);
      for (let sent = 0; sent < FLOOD_BODY_BYTES && !answered; sent += piece.length) {
        if (!socket.write(piece)) await new Promise<void>((resume) => (drained = resume));
      }
    });
  });
}

/** FLOOD_CLIENTS concurrent 25 MiB bodies with a wrong signature, and an authorized deploy in the middle of them. */
async function signedFlood(repo: string): Promise<void> {
  log(`signed flood: ${FLOOD_CLIENTS} concurrent ${FLOOD_BODY_BYTES / MB} MiB bodies with a wrong signature, one authorized deploy during it`);
  const server = await startService(repo, "true");
  try {
    await sleep(1000);
    const idle = procStatus(server.pid)?.rss ?? NaN;
    const sampler = rssSampler(server.pid);
    const t0 = performance.now();
    let answered = 0;
    const statuses = new Map<number, number>();
    const attack = Promise.all(
      Array.from({ length: FLOOD_CLIENTS }, () =>
        signedFloodClient(server.port).then((status) => {
          answered++;
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }),
      ),
    );
    // The deploy is sent once the first attackers have their answers: the server is in the middle of the flood.
    for (let i = 0; i < 2000 && answered < 16; i++) await sleep(5);
    const deployStart = performance.now();
    const text = await bounded(post(server.url).then((r) => r.text()), 60_000, "the deploy during the flood");
    const deployMs = performance.now() - deployStart;
    const pendingAtDone = FLOOD_CLIENTS - answered;
    await bounded(attack, 150_000, "the signed flood");
    const seconds = (performance.now() - t0) / 1000;
    const { peak, hwm, split } = sampler.stop();
    const growth = Math.max(peak, hwm) - idle;
    const done = lastLine(text);
    row(`signed flood: server peak RSS (${FLOOD_CLIENTS} × ${FLOOD_BODY_BYTES / MB} MiB, wrong signature)`, "≤ idle + 64 MB", `idle + ${fmtMB(growth)}`, "", "", growth <= 64 * MB);
    row("signed flood: authorized deploy during it", "`[done] ok=true`", done.startsWith("[done] ok=true") ? "[done] ok=true" : done.slice(0, 40), "", "", done.startsWith("[done] ok=true"));
    const counts = [...statuses].sort((a, b) => a[0] - b[0]).map(([status, n]) => `${n} × ${status || "closed"}`).join(", ");
    notes.push(
      `signed flood: ${counts} in ${seconds.toFixed(1)} s; idle ${fmtMB(idle)}, sampled peak ${fmtMB(peak)} (${split}), VmHWM ${fmtMB(hwm)}; ` +
        `the deploy took ${fmtMs(deployMs)} and ended with ${pendingAtDone} attackers still unanswered`,
    );
  } finally {
    await server.stop();
  }
}

/** Counts a byte stream; notes when the `[run] $` line went by (the start of the script's output). */
async function countStream(stream: ReadableStream<Uint8Array>, t0: number): Promise<{ bytes: number; runMs: number; totalMs: number; tail: string; skipped: boolean }> {
  let bytes = 0;
  let runAt = NaN;
  let head = "";
  let tail = "";
  for await (const value of stream) {
    bytes += value.length;
    if (Number.isNaN(runAt)) {
      head += Buffer.from(value).toString("latin1");
      if (head.includes("[run] $")) runAt = performance.now();
    }
    tail = (tail + Buffer.from(value.subarray(Math.max(0, value.length - 4096))).toString("latin1")).slice(-8192);
  }
  const end = performance.now();
  return { bytes, runMs: end - runAt, totalMs: end - t0, tail, skipped: tail.includes("[stream] skipped") };
}

/**
 * Reads a streamed deploy as a fast client: curl (what the README uses) writing into a pipe that this process
 * reads, exactly as it reads the bare `… | cat` pipe; without curl, fetch. The throughput window runs from the
 * `[run] $` line to the end of the response.
 */
async function readStream(url: string): Promise<{ bytes: number; runMs: number; totalMs: number; tail: string; skipped: boolean }> {
  const t0 = performance.now();
  if (!which("curl")) return countStream((await post(url)).body!, t0);
  const proc = Bun.spawn(["curl", "-sS", "-N", "-X", "POST", "-H", `X-Service-Secret: ${SECRET}`, url], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  started.add(proc);
  try {
    const result = await countStream(proc.stdout, t0);
    if ((await proc.exited) !== 0) throw new Error(`curl failed: ${await new Response(proc.stderr).text()}`);
    return result;
  } finally {
    started.delete(proc);
  }
}

/** The JSON log records of a service's deploys, done ones only. */
function doneRecords(cwd: string): { durationMs: number; status: string; result: { ok: boolean }; logFile: string }[] {
  const dir = join(cwd, ".service", "logs");
  if (!existsSync(dir)) return [];
  const out = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".json")).sort()) {
    try {
      const record = JSON.parse(readFileSync(join(dir, name), "utf8"));
      if (record.status === "done") out.push({ ...record, logFile: join(dir, name.replace(/\.json$/, ".log")) });
    } catch {}
  }
  return out;
}

/** 100 MB of output: the fast client, then the client that never reads until the deploy is over. */
async function stream(repo: string, hasWebhook: boolean): Promise<void> {
  log(`stream throughput: ${STREAM_RUNS} × ${STREAM_BYTES / MB} MB through the service and through a bare pipe, interleaved`);
  const server = await startService(repo, GENERATOR);
  let fastDurations: number[] = [];
  try {
    const before = procStatus(server.pid)?.rss ?? NaN;
    const sampler = rssSampler(server.pid);
    const ours: number[] = [];
    const bare: number[] = [];
    let skipped = false;
    for (let i = 0; i < STREAM_RUNS; i++) {
      const r = await bounded(readStream(server.url), 60_000, "a 100 MB deploy");
      if (!lastLine(r.tail).startsWith("[done] ok=true")) throw new Error(`the 100 MB deploy did not end ok: ${r.tail.slice(-300)}`);
      if (r.bytes < STREAM_BYTES) skipped = true;
      skipped ||= r.skipped;
      // What the client received of the script's output (a [stream] skipped mark means some was not sent).
      ours.push(Math.min(r.bytes, STREAM_BYTES) / MB / (r.runMs / 1000));
      const t0 = performance.now();
      const proc = Bun.spawn(["sh", "-c", `${GENERATOR} | cat`], { cwd: repo, env: benchEnv(), stdin: "ignore", stdout: "pipe", stderr: "ignore" });
      started.add(proc);
      let bytes = 0;
      await bounded(
        (async () => {
          for await (const chunk of proc.stdout) bytes += chunk.length;
          await proc.exited;
        })(),
        60_000,
        "a bare 100 MB pipe",
      );
      started.delete(proc);
      if (bytes !== STREAM_BYTES) throw new Error(`the bare pipe gave ${bytes} bytes`);
      bare.push(STREAM_BYTES / MB / ((performance.now() - t0) / 1000));
    }
    const { peak, hwm, split } = sampler.stop();
    notes.push(`stream: server RSS ${fmtMB(before)} before, sampled peak ${fmtMB(peak)} (${split}), VmHWM ${fmtMB(hwm)}`);
    fastDurations = doneRecords(server.cwd).map((r) => r.durationMs);
    const o = median(ours);
    const b = median(bare);
    notes.push(`stream throughput per run (MB/s): service ${ours.map((v) => v.toFixed(0)).join(", ")}; bare pipe ${bare.map((v) => v.toFixed(0)).join(", ")}${skipped ? "; the fast client fell more than 4 MiB behind at times and was sent a [stream] skipped mark (the throughput counts only what it received)" : ""}`);
    notes.push(`stream: deploy durationMs (JSON log) ${fastDurations.join(", ")}`);
    row(`stream throughput (100 MB, ${which("curl") ? "curl" : "fetch"} receives)`, "≥ 50 % of bare `… | cat`", `${o.toFixed(0)} MB/s`, `${b.toFixed(0)} MB/s`, `${((o / b) * 100).toFixed(0)} %`, o >= 0.5 * b);
    const p = Math.max(peak, hwm);
    row("stream: server peak RSS", "≤ 80 MB", fmtMB(p), "", "", p <= 80 * MB);
  } finally {
    await server.stop();
  }

  if (hasWebhook) {
    // For information: adnanh/webhook buffers the whole output and sends it at the end.
    const webhook = await startWebhook(repo, [{ id: "stream", script: GENERATOR }]);
    try {
      const sampler = rssSampler(webhook.pid);
      const t0 = performance.now();
      const response = await bounded(post(`${webhook.url}stream`), 60_000, "the webhook 100 MB deploy");
      const body = await bounded(response.arrayBuffer(), 60_000, "the webhook 100 MB body");
      const ms = performance.now() - t0;
      const { peak, hwm } = sampler.stop();
      notes.push(`stream: adnanh/webhook (buffers the whole output, sends it at the end): ${(body.byteLength / MB).toFixed(0)} MB in ${fmtMs(ms)} end to end (${(body.byteLength / MB / (ms / 1000)).toFixed(0)} MB/s, first byte after the script ended), peak RSS ${fmtMB(Math.max(peak, hwm))}`);
    } finally {
      await webhook.stop();
    }
  }

  log(`slow client: ${STREAM_RUNS} deploys of ${STREAM_BYTES / MB} MB to a client that reads only after the deploy is over`);
  const slowServer = await startService(repo, GENERATOR);
  try {
    const slowBefore = procStatus(slowServer.pid)?.rss ?? NaN;
    const sampler = rssSampler(slowServer.pid);
    const durations: number[] = [];
    const received: number[] = [];
    let complete = true;
    let logBytes = 0;
    let truncatedMark = true;
    let skippedMark = true;
    for (let i = 0; i < STREAM_RUNS; i++) {
      const before = doneRecords(slowServer.cwd).length;
      const socket: Socket = connect(slowServer.port, "127.0.0.1");
      socket.on("error", () => {});
      try {
        await bounded(new Promise<void>((done) => socket.once("connect", () => done())), 5000, "the slow client's connect");
        socket.pause();
        socket.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1:${slowServer.port}\r\nX-Service-Secret: ${SECRET}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
        const record = await bounded(
          (async () => {
            for (;;) {
              const records = doneRecords(slowServer.cwd);
              if (records.length > before) return records[records.length - 1]!;
              await sleep(20);
            }
          })(),
          60_000,
          "the slow client's deploy",
        );
        durations.push(record.durationMs);
        complete &&= record.status === "done" && record.result.ok;
        const logText = readFileSync(record.logFile, "latin1");
        logBytes = Math.max(logBytes, logText.length);
        complete &&= logText.trimEnd().endsWith("[done] ok=true exitCode=0");
        truncatedMark &&= logText.includes("[log] truncated");
        // Now read everything.
        let bytes = 0;
        let tail = "";
        await bounded(
          new Promise<void>((done) => {
            socket.on("data", (chunk: Buffer) => {
              bytes += chunk.length;
              tail = (tail + chunk.subarray(Math.max(0, chunk.length - 4096)).toString("latin1")).slice(-8192);
            });
            socket.on("close", () => done());
            socket.resume();
          }),
          30_000,
          "reading the slow client's response",
        );
        received.push(bytes);
        skippedMark &&= tail.includes("[stream] skipped") || bytes < STREAM_BYTES;
        complete &&= /\[done\] ok=true exitCode=0\n/.test(tail);
      } finally {
        socket.destroy();
      }
    }
    const { peak, hwm, split } = sampler.stop();
    notes.push(`slow client: server RSS ${fmtMB(slowBefore)} before, sampled peak ${fmtMB(peak)} (${split}), VmHWM ${fmtMB(hwm)}`);
    const slow = median(durations);
    const fast = median(fastDurations);
    notes.push(`slow client: deploy durationMs ${durations.join(", ")} (fast client ${fastDurations.join(", ")}); received ${received.map((b) => fmtMB(b)).join(", ")} of ${fmtMB(STREAM_BYTES)} output (the rest skipped with a [stream] skipped mark: ${skippedMark ? "yes" : "no"})`);
    notes.push(`slow client: the .log holds ${fmtMB(logBytes)}: maxLogBytes (default 10 MiB) caps its output${truncatedMark ? ", with a [log] truncated mark" : ""}; the .json says done with the whole result`);
    row("slow client: deploy time vs fast client (durationMs)", "≤ 1.2×", fmtMs(slow), `${fmtMs(fast)} (fast client)`, fmtX(slow / fast), slow <= 1.2 * fast);
    const p = Math.max(peak, hwm);
    row("slow client: server peak RSS", "≤ 80 MB", fmtMB(p), "", "", p <= 80 * MB);
    row("slow client: logs complete (.json done, .log ends with [done])", "yes", complete ? "yes" : "no", "", "", complete);
  } finally {
    await slowServer.stop();
  }
}

// ---------------------------------------------------------------------------------------------- output

function printTables(header: string[]): void {
  const columns = ["figure", "target", "ours", "peer", "ratio", "result"] as const;
  const titles = { figure: "figure", target: "target", ours: "service", peer: "peer (webhook / bare sh)", ratio: "ratio", result: "result" };
  const widths = columns.map((c) => Math.max(titles[c].length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ");
  const out: string[] = ["", ...header, "", line(columns.map((c) => titles[c])), line(widths.map((w) => "-".repeat(w)))];
  for (const r of rows) out.push(line(columns.map((c) => r[c])));
  if (notes.length) out.push("", ...notes.map((n) => `- ${n}`));
  const escape = (cell: string) => cell.replaceAll("|", "\\|");
  out.push("", "Markdown:", "", ...header.map((h) => `${h}  `), "");
  out.push(`| ${columns.map((c) => titles[c]).join(" | ")} |`, `|${columns.map(() => "---").join("|")}|`);
  for (const r of rows) out.push(`| ${columns.map((c) => escape(r[c] || "")).join(" | ")} |`);
  if (notes.length) out.push("", ...notes.map((n) => `- ${escape(n)}`));
  console.log(out.join("\n"));
}

async function main(): Promise<number> {
  const header = machine();
  for (const h of header) log(h);
  const hasWebhook = !!which("webhook");
  const hasWrk = !!which("wrk");
  if (!hasWebhook || !hasWrk) {
    const missing = [!hasWebhook && "webhook", !hasWrk && "wrk"].filter(Boolean).join(" ");
    const message = `${missing} not found: install with \`sudo apt-get update && sudo apt-get install -y ${missing}\` (Debian/Ubuntu; adnanh/webhook is the package "webhook"); the figures that need it say n/a`;
    log(message);
    notes.push(message);
  }
  await ensureBinary();
  const repo = makeRepo("repo").clone;
  const cases: [string, () => Promise<void>][] = [
    ["start and idle memory", () => startAndIdle(repo, hasWebhook)],
    ["unauthorized", () => unauthorized(repo, hasWebhook, hasWrk)],
    ["latency", () => latency(repo, hasWebhook)],
    ["burst", () => burst(makeRepo("burst").clone, hasWebhook)],
    ["latest", () => latestBurst(makeRepo("latest").clone)],
    ["stream", () => stream(makeRepo("stream").clone, hasWebhook)],
    ["signed flood", () => signedFlood(makeRepo("flood").clone)],
  ];
  const only = process.argv.includes("--only") ? (process.argv[process.argv.indexOf("--only") + 1] ?? "").split(",") : undefined;
  for (const [name, run] of cases) {
    if (only && !only.some((o) => name.startsWith(o))) continue;
    try {
      await bounded(run(), 180_000, `the ${name} case`);
    } catch (error) {
      log(`the ${name} case failed: ${(error as Error).message}`);
      rows.push({ figure: name, target: "", ours: "error", peer: "", ratio: "", result: "MISS" });
      notes.push(`${name}: failed: ${(error as Error).message.split("\n")[0]}`);
    }
  }
  log(`done in ${((performance.now() - startedAt) / 1000).toFixed(0)} s`);
  printTables(header);
  // A MISS is a result, not a failure; a case that could not run is.
  return rows.some((r) => r.ours === "error") ? 1 : 0;
}

let exitCode = 2;
const watchdog = setTimeout(() => {
  log(`the bench ran over ${BENCH_DEADLINE_MS / 60_000} minutes: stopping`);
  void cleanup().finally(() => process.exit(2));
}, BENCH_DEADLINE_MS);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    log(`${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}
try {
  exitCode = await main();
} catch (error) {
  log(`failed: ${(error as Error).stack ?? error}`);
} finally {
  clearTimeout(watchdog);
  await cleanup();
}
process.exit(exitCode);
