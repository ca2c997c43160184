/**
 * What every case of the bench works with: a temp dir for its repositories and working directories, the
 * processes it started (all stopped at the end, with any deploy script left in the temp dir), the servers
 * measured (the compiled service, adnanh/webhook), and the report the figures go to.
 */
import { mkdirSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { dirname, join, resolve } from "node:path";
import { freePort } from "../../test/_support/proxies.ts";
import { baseEnv, makeRepoIn, makeTempDir, post as postTo, ROOT } from "../../test/_support/repo.ts";
import { Report } from "./report.ts";
import { sleep } from "./measure.ts";

/** The binary measured: dist/service (built when stale), or BENCH_BIN to compare another build. */
export const BIN = process.env.BENCH_BIN ? resolve(process.env.BENCH_BIN) : join(ROOT, "dist", "service");
export const SECRET = "bench-secret-0123456789abcdef";
export const WRONG = "wrong-secret-0123456789abcdef";

export const post = (url: string, secret = SECRET) => postTo(url, { secret });

export { freePort };

/** Resolves once a TCP connect to the port succeeds (tried back to back, so the first moment is caught). */
export async function waitForListen(port: number, timeoutMs: number, alive: () => boolean): Promise<void> {
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

export interface Server {
  name: string;
  pid: number;
  port: number;
  url: string;
  cwd: string;
  proc: Bun.Subprocess;
  output: { text: string };
  stop(): Promise<void>;
}

export interface Hook {
  id: string;
  script: string;
}

/** One measured scenario: a file in cases/ whose default export this is, named in the runner's list. */
export interface Case {
  /** What `--only` matches (by prefix) and the progress lines say. */
  name: string;
  /** Adds its figures to `bench.report`; throwing marks the case as failed. */
  run(bench: Bench): Promise<void>;
}

export class Bench {
  readonly tmpRoot = makeTempDir("service-bench-");
  readonly report = new Report();
  private readonly started = new Set<Bun.Subprocess>();
  private serverCount = 0;
  private readonly repos = new Map<string, string>();

  constructor(
    readonly hasWebhook: boolean,
    readonly hasWrk: boolean,
  ) {}

  /** A process to stop at the end if it is still running then. */
  track(proc: Bun.Subprocess): void {
    this.started.add(proc);
  }

  untrack(proc: Bun.Subprocess): void {
    this.started.delete(proc);
  }

  /**
   * The clone of a bare remote with one commit (the deployed checkout, up to date), made on first use: cases
   * that ask for the same name share it.
   */
  repo(name: string): string {
    let clone = this.repos.get(name);
    if (!clone) this.repos.set(name, (clone = makeRepoIn(join(this.tmpRoot, name)).clone));
    return clone;
  }

  async stopProcess(proc: Bun.Subprocess): Promise<void> {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      this.started.delete(proc);
      return;
    }
    proc.kill("SIGTERM");
    const exited = await Promise.race([proc.exited.then(() => true), sleep(5000).then(() => false)]);
    if (!exited) {
      proc.kill("SIGKILL");
      await Promise.race([proc.exited, sleep(2000)]);
    }
    this.started.delete(proc);
  }

  /** The compiled service in a fresh working directory (its own logs), listening on 127.0.0.1. */
  async startService(repo: string, runScript: string, extra: Record<string, string> = {}): Promise<Server> {
    const cwd = join(this.tmpRoot, `service-${++this.serverCount}`);
    mkdirSync(cwd, { recursive: true });
    const port = await freePort();
    const env = baseEnv({
      SERVICE_PORT: String(port),
      SERVICE_HOSTNAME: "127.0.0.1",
      SERVICE_SECRET: SECRET,
      SERVICE_REPO_PATH: repo,
      SERVICE_RUN_SCRIPT: runScript,
      ...extra,
    });
    return this.launch("service", [BIN], cwd, env, port, "/");
  }

  /**
   * The compiled service in a working directory of its own, holding `files` (a service.yaml, records…), with
   * `env` and the port only: `cwd` names a directory prepared beforehand.
   */
  async startServiceWith(files: Record<string, string>, env: Record<string, string>, cwd?: string): Promise<Server> {
    const dir = cwd ?? join(this.tmpRoot, `service-${++this.serverCount}`);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    mkdirSync(dir, { recursive: true });
    const port = await freePort();
    const all = baseEnv({ SERVICE_PORT: String(port), SERVICE_HOSTNAME: "127.0.0.1", ...env });
    return this.launch("service", [BIN], dir, all, port, "/");
  }

  /** adnanh/webhook with one hook per case: a header-value rule on X-Service-Secret, `sh -c 'git pull && <script>'`. */
  async startWebhook(repo: string, hooks: Hook[]): Promise<Server> {
    const cwd = join(this.tmpRoot, `webhook-${++this.serverCount}`);
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
          "trigger-rule": {
            match: { type: "value", value: SECRET, parameter: { source: "header", name: "X-Service-Secret" } },
          },
        })),
        null,
        2,
      ),
    );
    const port = await freePort();
    return this.launch(
      "webhook",
      ["webhook", "-hooks", file, "-ip", "127.0.0.1", "-port", String(port), "-http-methods", "POST"],
      cwd,
      baseEnv(),
      port,
      "/hooks/",
    );
  }

  /** Starts a server process, collects its output, and waits until it accepts connections on `port`. */
  async launch(
    name: string,
    argv: string[],
    cwd: string,
    env: Record<string, string>,
    port: number,
    path: string,
  ): Promise<Server> {
    const proc = Bun.spawn(argv, { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    this.started.add(proc);
    const output = { text: "" };
    drain(proc.stdout, output);
    drain(proc.stderr, output);
    try {
      await waitForListen(port, 10_000, () => proc.exitCode === null);
    } catch (error) {
      await this.stopProcess(proc);
      throw new Error(`${(error as Error).message}: ${output.text}`);
    }
    return {
      name,
      pid: proc.pid,
      port,
      url: `http://127.0.0.1:${port}${path}`,
      cwd,
      proc,
      output,
      stop: () => this.stopProcess(proc),
    };
  }

  /** Kills what is left: our children, then any process whose working directory is in the temp dir (deploy scripts). */
  async cleanup(): Promise<void> {
    await Promise.all([...this.started].map((proc) => this.stopProcess(proc).catch(() => {})));
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      try {
        if (readlinkSync(`/proc/${entry}/cwd`).startsWith(this.tmpRoot)) process.kill(Number(entry), "SIGKILL");
      } catch {}
    }
    rmSync(this.tmpRoot, { recursive: true, force: true });
  }
}
