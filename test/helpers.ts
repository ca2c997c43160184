/**
 * Shared test fixtures: real git repositories (a bare "remote" and a clone) in temp dirs, the real CLI started
 * as a process, and conditions waited for (never bare sleeps).
 */
import { afterAll } from "bun:test";
import { mkdtempSync, realpathSync, rmSync, writeFileSync, readdirSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "..");
/** The CLI under test: the compiled binary when SERVICE_TEST_BIN is set, else the source run by Bun. */
export const CLI: string[] = process.env.SERVICE_TEST_BIN
  ? [process.env.SERVICE_TEST_BIN]
  : [process.execPath, "--no-env-file", join(ROOT, "src/cli.ts")];

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(prefix = "service-test-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}

/** The environment every spawned process gets: no SERVICE_* from the outside, fixed git identity, no colour. */
export function baseEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("SERVICE_") && !key.startsWith("GIT_")) env[key] = value;
  }
  Object.assign(env, {
    NO_COLOR: "1",
    CI: "1",
    SERVICE_SKIP_HTTPS_PROMPT: "1",
    GIT_AUTHOR_NAME: "Test",
    GIT_AUTHOR_EMAIL: "test@example.com",
    GIT_COMMITTER_NAME: "Test",
    GIT_COMMITTER_EMAIL: "test@example.com",
    GIT_CONFIG_NOSYSTEM: "1",
  });
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

export function git(cwd: string, ...args: string[]): string {
  const result = Bun.spawnSync(["git", ...args], { cwd, env: baseEnv(), stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed in ${cwd}: ${result.stderr.toString()}`);
  return result.stdout.toString().trim();
}

export interface Repo {
  /** Holds everything of this fixture. */
  dir: string;
  /** The bare "remote". */
  remote: string;
  /** The clone the service deploys (repoPath). */
  clone: string;
  /** Commits `files` in a second clone and pushes to the remote; returns the new commit. */
  push(files: Record<string, string>, message?: string): string;
  head(): string;
}

/** A bare remote with one commit, and a clone of it (the deployed checkout). */
export function makeRepo(files: Record<string, string> = { "README.md": "app\n" }): Repo {
  const dir = tempDir("service-repo-");
  const remote = join(dir, "remote.git");
  const clone = join(dir, "app");
  const pusher = join(dir, "pusher");
  git(dir, "init", "--quiet", "--bare", "--initial-branch=main", remote);
  git(dir, "clone", "--quiet", remote, pusher);
  git(pusher, "checkout", "--quiet", "-B", "main");
  const push = (changes: Record<string, string>, message = "change") => {
    for (const [name, content] of Object.entries(changes)) writeFileSync(join(pusher, name), content);
    git(pusher, "add", "-A");
    git(pusher, "commit", "--quiet", "--allow-empty", "-m", message);
    git(pusher, "push", "--quiet", "origin", "main");
    return git(pusher, "rev-parse", "HEAD");
  };
  push(files, "initial");
  git(dir, "clone", "--quiet", remote, clone);
  return { dir, remote, clone, push, head: () => git(clone, "rev-parse", "HEAD") };
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

/** Resolves when `check` returns a truthy value; fails after `timeoutMs` with `what`. */
export async function waitFor<T>(check: () => T | Promise<T>, what: string, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** Collects a child's output as text while it runs. */
function collect(stream: ReadableStream<Uint8Array>, into: { text: string }): Promise<void> {
  const decoder = new TextDecoder();
  return (async () => {
    for await (const chunk of stream) into.text += decoder.decode(chunk, { stream: true });
  })();
}

export interface RunningServer {
  url: string;
  port: number;
  proc: Bun.Subprocess<"pipe", "pipe", "pipe">;
  stdout: { text: string };
  stderr: { text: string };
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<number | null>;
}

const running = new Set<RunningServer>();
afterAll(async () => {
  for (const server of running) server.proc.kill("SIGKILL");
});

/** Starts the real CLI server in `cwd` on a free port and waits for its banner. */
export async function startServer(cwd: string, env: Record<string, string | undefined> = {}, args: string[] = []): Promise<RunningServer> {
  const proc = Bun.spawn([...CLI, ...args], {
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
  const match = await waitFor(
    () => {
      if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}: ${stdout.text}${stderr.text}`);
      return /listening on http:\/\/localhost:(\d+)/.exec(stdout.text);
    },
    "the server banner",
  );
  const port = Number(match[1]);
  const server: RunningServer = {
    url: `http://localhost:${port}`,
    port,
    proc,
    stdout,
    stderr,
    async stop() {
      proc.kill("SIGTERM");
      const code = await proc.exited;
      running.delete(server);
      return code;
    },
  };
  running.add(server);
  return server;
}

/** Runs the real CLI to completion. */
export async function runCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = Bun.spawn([...CLI, ...args], {
    cwd: options.cwd,
    env: baseEnv(options.env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), options.timeoutMs ?? 30_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** POSTs to the server; `secret` goes in X-Service-Secret unless headers say otherwise. */
export function post(url: string, options: { secret?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { ...(options.secret !== undefined ? { "x-service-secret": options.secret } : {}), ...options.headers };
  return fetch(url, { method: "POST", headers, body: options.body });
}

/** The deploy log files in `<cwd>/.service/logs`, sorted by name. */
export function logFiles(cwd: string): string[] {
  const dir = join(cwd, ".service", "logs");
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

export function readJson<T = any>(file: string): T {
  return JSON.parse(readFileSync(file, "utf8")) as T;
}

/** The last line of a streamed response body. */
export function lastLine(text: string): string {
  const lines = text.trimEnd().split("\n");
  return lines[lines.length - 1] ?? "";
}

export const SECRET = "test-secret-0123456789";
