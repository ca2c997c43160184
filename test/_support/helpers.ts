/**
 * Test fixtures: those of `repo.ts`, with every temp dir and server removed after the run (after-run.ts), the real
 * CLI started as a process, and the requests and logs the tests look at.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, CLI, makeRepoIn, makeTempDir, type Repo, waitFor, git } from "./repo";
import { afterRun } from "./after-run.ts";

export * from "./repo";

/** A new temporary directory, removed after the run. */
export function tempDir(prefix = "service-test-"): string {
  const dir = makeTempDir(prefix);
  afterRun(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A bare remote with one commit, and a clone of it (the deployed checkout). */
export function makeRepo(files: Record<string, string> = { "README.md": "app\n" }): Repo {
  return makeRepoIn(tempDir("service-repo-"), files);
}

/** A git repository with commits but no remote. */
export function makeLocalRepo(files: Record<string, string> = { "README.md": "app\n" }): string {
  const dir = join(tempDir("service-local-"), "app");
  git(tempDir(), "init", "--quiet", "--initial-branch=main", dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  git(dir, "add", "-A");
  git(dir, "commit", "--quiet", "-m", "initial");
  return dir;
}

/** Collects a child's output as text while it runs. */
export function collect(stream: ReadableStream<Uint8Array>, into: { text: string }): Promise<void> {
  const decoder = new TextDecoder();
  return (async () => {
    for await (const chunk of stream) into.text += decoder.decode(chunk, { stream: true });
  })();
}

/**
 * Whether a deploy's listed status says it ended. Not merely "not running": `unknown` and `corrupt` say nothing of
 * an end.
 */
export const hasEnded = (status: string) =>
  ["done", "cancelled", "interrupted", "refused", "superseded"].includes(status);

export interface RunningServer {
  url: string;
  port: number;
  proc: Bun.Subprocess<"pipe", "pipe", "pipe">;
  stdout: { text: string };
  stderr: { text: string };
  /** SIGTERM, then wait for the exit; once stopped, the same exit code again. */
  stop(): Promise<number | null>;
  /** `await using server = await startServer(…)`: stopped (SIGTERM, then the exit) when the block ends. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** The servers started and not stopped yet: killed after the run, whatever their tests did. */
const running = new Set<RunningServer>();
afterRun(() => {
  for (const server of running) server.proc.kill("SIGKILL");
});

/**
 * Starts the real CLI server in `cwd` on a free port and waits for its banner. `umask` (e.g. "022") starts it
 * through `sh -c 'umask …; exec …'`: the modes of the files it makes must not depend on the umask it inherits.
 * `ulimit` (descriptors) does the same with `ulimit -n`, so that a bounded flood reaches the server's limit.
 */
export async function startServer(
  cwd: string,
  env: Record<string, string | undefined> = {},
  args: string[] = [],
  options: { umask?: string; ulimit?: number } = {},
): Promise<RunningServer> {
  const setup = [
    ...(options.umask ? [`umask ${options.umask}`] : []),
    ...(options.ulimit ? [`ulimit -n ${options.ulimit}`] : []),
  ];
  const command = setup.length ? ["sh", "-c", `${setup.join(" && ")} && exec "$@"`, "sh", ...CLI] : CLI;
  const proc = Bun.spawn([...command, ...args], {
    cwd,
    env: baseEnv({ SERVICE_PORT: "0", ...env }),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout = { text: "" };
  const stderr = { text: "" };
  void collect(proc.stdout, stdout);
  void collect(proc.stderr, stderr);
  const match = await waitFor(() => {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}: ${stdout.text}${stderr.text}`);
    return /listening on http:\/\/localhost:(\d+)/.exec(stdout.text);
  }, "the server banner");
  const port = Number(match[1]);
  let stopping: Promise<number | null> | undefined;
  const server: RunningServer = {
    url: `http://localhost:${port}`,
    port,
    proc,
    stdout,
    stderr,
    stop() {
      stopping ??= (async () => {
        proc.kill("SIGTERM");
        const code = await proc.exited;
        running.delete(server);
        return code;
      })();
      return stopping;
    },
    async [Symbol.asyncDispose]() {
      await server.stop();
    },
  };
  running.add(server);
  return server;
}

/** A server with the repository it deploys and the file its run script records each deploy in. */
export interface RecordingServer extends RunningServer {
  repo: Repo;
  /** The run script appends `ran <deploy id>` to this file. */
  ran: string;
}

/**
 * A server for a new repository, loopback only, with SECRET, on path `path`, whose run script records each run
 * in `ran`: `await using server = await startRecordingServer()`.
 */
export async function startRecordingServer(env: Record<string, string> = {}, path = "/hook"): Promise<RecordingServer> {
  const repo = makeRepo();
  const ran = join(tempDir("service-ran-"), "ran.log");
  const server = await startServer(repo.clone, {
    SERVICE_HOSTNAME: "127.0.0.1",
    SERVICE_SECRET: SECRET,
    SERVICE_PATH: path,
    SERVICE_RUN_SCRIPT: `echo "ran $SERVICE_DEPLOY_ID" >> '${ran}'`,
    ...env,
  });
  return Object.assign(server, { repo, ran });
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `argv` to completion with exactly `env` (no baseEnv added), its output read whole; SIGKILLed after
 * `timeoutMs` (30 s unless told).
 */
export async function runProcess(
  argv: string[],
  options: { cwd: string; env?: Record<string, string>; stdin?: "ignore" | Uint8Array; timeoutMs?: number },
): Promise<ProcessResult> {
  const proc = Bun.spawn(argv, {
    cwd: options.cwd,
    env: options.env,
    stdin: options.stdin ?? "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), options.timeoutMs ?? 30_000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Runs the real CLI to completion. */
export function runCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number },
): Promise<ProcessResult> {
  return runProcess([...CLI, ...args], { cwd: options.cwd, env: baseEnv(options.env), timeoutMs: options.timeoutMs });
}

/** The deploy log files in `<cwd>/.service/logs`, sorted by name. */
export function logFiles(cwd: string): string[] {
  const dir = join(cwd, ".service", "logs");
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

export function readJson<T = any>(file: string): T {
  return JSON.parse(readFileSync(file, "utf8")) as T;
}

export const SECRET = "test-secret-0123456789";

/**
 * `using _ = defer(() => …)` (or `await using` for an async action): runs `action` when the block ends, before
 * what was declared earlier in the block is disposed (say, opening a gate before the server whose deploy waits
 * at it is stopped). In place of a try/finally around the whole test.
 */
export function defer(action: () => unknown): Disposable & AsyncDisposable {
  return {
    [Symbol.dispose]() {
      void action();
    },
    async [Symbol.asyncDispose]() {
      await action();
    },
  };
}
