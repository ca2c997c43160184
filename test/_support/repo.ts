/**
 * The fixtures shared by the tests and the benchmark, free of test-runner hooks (so a plain script can import
 * them): temp dirs, real git repositories (a bare "remote" and a clone), the environment of spawned processes,
 * the CLI under test, and conditions waited for (never bare sleeps).
 */
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "..", "..");
/** The CLI under test: the compiled binary when SERVICE_TEST_BIN is set, else the source run by Bun. */
export const CLI: string[] = process.env.SERVICE_TEST_BIN
  ? [process.env.SERVICE_TEST_BIN]
  : [process.execPath, "--no-env-file", join(ROOT, "src/cli.ts")];

/** A new directory under the system temp dir, by its real path (macOS /tmp is a symlink); the caller removes it. */
export function makeTempDir(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
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

/** A bare remote with one commit, and a clone of it (the deployed checkout), all in `dir`. */
export function makeRepoIn(dir: string, files: Record<string, string> = { "README.md": "app\n" }): Repo {
  mkdirSync(dir, { recursive: true });
  const remote = join(dir, "remote.git");
  const clone = join(dir, "app");
  const pusher = join(dir, "pusher");
  git(dir, "init", "--quiet", "--bare", "--initial-branch=main", remote);
  git(dir, "clone", "--quiet", remote, pusher);
  git(pusher, "checkout", "--quiet", "-B", "main");
  const push = (changes: Record<string, string>, message = "change") => {
    for (const [name, content] of Object.entries(changes)) {
      mkdirSync(dirname(join(pusher, name)), { recursive: true });
      writeFileSync(join(pusher, name), content);
    }
    git(pusher, "add", "-A");
    git(pusher, "commit", "--quiet", "--allow-empty", "-m", message);
    git(pusher, "push", "--quiet", "origin", "main");
    return git(pusher, "rev-parse", "HEAD");
  };
  push(files, "initial");
  git(dir, "clone", "--quiet", remote, clone);
  return { dir, remote, clone, push, head: () => git(clone, "rev-parse", "HEAD") };
}

/** Resolves when `check` returns a truthy value; fails after `timeoutMs` with `what`. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 20_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** POSTs to the server; `secret` goes in X-Service-Secret unless headers say otherwise. */
export function post(
  url: string,
  options: { secret?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    ...(options.secret !== undefined ? { "x-service-secret": options.secret } : {}),
    ...options.headers,
  };
  return fetch(url, { method: "POST", headers, body: options.body });
}

/** The last line of a streamed response body. */
export function lastLine(text: string): string {
  const lines = text.trimEnd().split("\n");
  return lines[lines.length - 1] ?? "";
}

/** Commits (empty) in the repository's pushing clone as `author` ("Name <email>") and pushes; returns the commit. */
export function pushAs(repo: Repo, author: string, message: string): string {
  const pusher = join(repo.dir, "pusher");
  git(pusher, "commit", "--quiet", "--allow-empty", "--author", author, "-m", message);
  git(pusher, "push", "--quiet", "origin", "main");
  return git(pusher, "rev-parse", "HEAD");
}
