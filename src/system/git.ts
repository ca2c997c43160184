import { readBranch, readHasRemote, readHead } from "./gitdir.ts";
import { runProcess, type ProcessExit } from "./process.ts";

export type Env = Record<string, string | undefined>;

/** git never waits for a password: no terminal prompt, no askpass dialog, ssh in batch mode. */
export function gitEnv(env: Env): Env {
  const out: Env = { ...env, GIT_TERMINAL_PROMPT: "0", GCM_INTERACTIVE: "never" };
  delete out.GIT_ASKPASS;
  delete out.SSH_ASKPASS;
  if (!out.GIT_SSH_COMMAND && !out.GIT_SSH) out.GIT_SSH_COMMAND = "ssh -o BatchMode=yes";
  return out;
}

/** Runs git and collects its output, trimmed (for small queries, not the streamed pull). */
export async function gitQuery(
  repoPath: string,
  args: string[],
  env: Env,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const out = { stdout: "", stderr: "" };
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  const outcome = await runProcess(["git", ...args], {
    cwd: repoPath,
    env: gitEnv(env),
    deadline: Date.now() + 60_000,
    onOutput: (stream, data) => {
      out[stream] += decoders[stream].decode(data, { stream: true });
    },
  });
  return { code: outcome.exitCode, stdout: out.stdout.trim(), stderr: out.stderr.trim() };
}

/** The commit HEAD points at, or null (not a repository, or no commit yet). */
export async function headCommit(repoPath: string, env: Env): Promise<string | null> {
  const fromFiles = readHead(repoPath, env);
  if (fromFiles !== undefined) return fromFiles;
  const { code, stdout } = await gitQuery(repoPath, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], env);
  return code === 0 && stdout ? stdout : null;
}

export interface RepoState {
  /** repoPath is inside a git work tree. */
  workTree: boolean;
  /** The commit HEAD points at; null when there is none yet. */
  head: string | null;
  hasRemote: boolean;
}

/** Everything the pipeline needs before the pull, from two git calls run side by side. */
export async function inspectRepo(repoPath: string, env: Env): Promise<RepoState> {
  const [head, hasRemote] = [readHead(repoPath, env), readHasRemote(repoPath, env)];
  if (head !== undefined && hasRemote !== undefined) return { workTree: true, head, hasRemote };
  // `rev-parse --is-inside-work-tree HEAD` prints "true" then the commit (or "HEAD" and fails in an empty repository).
  const [parsed, remotes] = await Promise.all([
    gitQuery(repoPath, ["rev-parse", "--is-inside-work-tree", "HEAD"], env),
    gitQuery(repoPath, ["remote"], env),
  ]);
  const [inside, commit] = parsed.stdout.split("\n");
  const workTree = inside === "true";
  return {
    workTree,
    head: workTree && commit && /^[0-9a-f]{40,64}$/.test(commit) ? commit : null,
    hasRemote: workTree && remotes.code === 0 && remotes.stdout.length > 0,
  };
}

export interface GitRunOptions {
  env: Env;
  deadline: number;
  onOutput: (stream: "stdout" | "stderr", data: Uint8Array) => void;
}

/**
 * `git pull`, without the automatic maintenance git runs inside it (a `git maintenance run --auto` process between
 * the pull and the script, about a millisecond and a half even when there is nothing to do): the deploy runs it
 * after its `[done]` line instead (`gitAutoMaintenance`).
 */
export function gitPull(repoPath: string, options: GitRunOptions): Promise<ProcessExit> {
  return runProcess(["git", "-c", "maintenance.auto=false", "pull"], {
    cwd: repoPath,
    ...options,
    env: gitEnv(options.env),
  });
}

/**
 * git's automatic maintenance as `git pull` runs it: `git maintenance run --auto` (a gc only when the clone needs
 * one, detached unless `maintenance.autoDetach` or `gc.autoDetach` says otherwise), unless the config says
 * `maintenance.auto` false.
 */
export async function gitAutoMaintenance(repoPath: string, env: Env): Promise<void> {
  const auto = await gitQuery(repoPath, ["config", "--type=bool", "--get", "maintenance.auto"], env);
  if (auto.stdout === "false") return;
  await gitQuery(repoPath, ["maintenance", "run", "--auto", "--quiet"], env);
}

export function gitResetHard(repoPath: string, commit: string, options: GitRunOptions): Promise<ProcessExit> {
  return runProcess(["git", "reset", "--hard", commit], { cwd: repoPath, ...options, env: gitEnv(options.env) });
}

/** `git merge --ff-only <commit>`: the branch moves to a commit already fetched, or nothing moves. */
export function gitMergeFastForward(repoPath: string, commit: string, options: GitRunOptions): Promise<ProcessExit> {
  return runProcess(["git", "merge", "--ff-only", "--no-edit", commit], {
    cwd: repoPath,
    ...options,
    env: gitEnv(options.env),
  });
}

/**
 * The commit `ref` (a full ref name) points at on `remote`, or null when the remote has no such ref. Throws with
 * git's own last line of error when the remote cannot be asked (unreachable, bad credentials, over `timeoutMs`).
 */
export async function lsRemote(
  repoPath: string,
  remote: string,
  ref: string,
  env: Env,
  timeoutMs = 30_000,
): Promise<string | null> {
  let stdout = "";
  let stderr = "";
  const decoder = new TextDecoder();
  const outcome = await runProcess(["git", "ls-remote", "--", remote, ref], {
    cwd: repoPath,
    env: gitEnv(env),
    deadline: Date.now() + timeoutMs,
    onOutput: (stream, data) => {
      if (stream === "stdout") stdout += decoder.decode(data, { stream: true });
      else stderr += decoder.decode(data, { stream: true });
    },
  });
  if (outcome.timedOut) throw new Error(`git ls-remote ${remote} did not answer within ${timeoutMs / 1000} s`);
  if (outcome.exitCode !== 0) {
    // A remote URL may carry credentials (https://user:token@host/): never in a log line or a status.
    const last = stderr
      .trim()
      .split("\n")
      .pop()
      ?.replace(/\/\/[^/@\s]*@/g, "//***@")
      .slice(0, 300);
    const why = last || (outcome.error ?? `exit code ${outcome.exitCode}`);
    throw new Error(`git ls-remote ${remote} failed: ${why}`);
  }
  for (const line of stdout.split("\n")) {
    const [commit, name] = line.split("\t");
    if (name === ref && commit && /^[0-9a-f]{40,64}$/.test(commit)) return commit;
  }
  return null;
}

/** `git fetch`, of the remote's default refspecs, or of `what` (a remote and its refs). */
export function gitFetch(repoPath: string, options: GitRunOptions, what: string[] = []): Promise<ProcessExit> {
  return runProcess(["git", "fetch", ...what], { cwd: repoPath, ...options, env: gitEnv(options.env) });
}

/** `git merge --abort` or `git rebase --abort`: a pull left half-done goes back to the commit from before. */
export function gitAbort(repoPath: string, what: "merge" | "rebase", options: GitRunOptions): Promise<ProcessExit> {
  return runProcess(["git", what, "--abort"], { cwd: repoPath, ...options, env: gitEnv(options.env) });
}

/** The branch a checkout must be on for `branch`; undefined when `branch` names no branch (unset, a tag's ref). */
export function wantedBranch(branch: string | undefined): string | undefined {
  if (!branch) return undefined;
  if (branch.startsWith("refs/heads/")) return branch.slice(11);
  return branch.startsWith("refs/") ? undefined : branch;
}

/** Where a local branch pulls from: its remote, the branch there, and the remote-tracking ref of it. */
export interface Upstream {
  remote: string;
  /** The branch's name on the remote (`main`). */
  branch: string;
  /** `refs/remotes/origin/main`. */
  ref: string;
}

/** The upstream of the local branch `branch` (`git pull`'s source), or null when it has none. */
export async function upstreamOf(repoPath: string, branch: string, env: Env): Promise<Upstream | null> {
  const format = "--format=%(upstream)%09%(upstream:remotename)%09%(upstream:remoteref)";
  const { code, stdout } = await gitQuery(repoPath, ["for-each-ref", format, `refs/heads/${branch}`], env);
  const [ref, remote, merge] = stdout.split("\t");
  if (code !== 0 || !ref || !remote || !merge?.startsWith("refs/heads/")) return null;
  return { remote, branch: merge.slice(11), ref };
}

/**
 * Whether `commit` is on `ref` now or was at a time the ref's reflog remembers (`git merge-base --fork-point`):
 * a commit the remote branch had before a force-push, as against one the clone made itself.
 */
export async function wasOnRef(repoPath: string, ref: string, commit: string, env: Env): Promise<boolean> {
  const { code, stdout } = await gitQuery(repoPath, ["merge-base", "--fork-point", ref, commit], env);
  return code === 0 && stdout === commit;
}

/** The remote a ref's name is looked up on: the checked-out branch's upstream remote, else `origin`, else the first. */
export async function defaultRemote(repoPath: string, env: Env): Promise<string | undefined> {
  const remotes = (await gitQuery(repoPath, ["remote"], env)).stdout.split("\n").filter(Boolean);
  if (remotes.length === 0) return undefined;
  const branch = (await gitQuery(repoPath, ["symbolic-ref", "--quiet", "--short", "HEAD"], env)).stdout;
  const upstream = branch ? (await gitQuery(repoPath, ["config", "--get", `branch.${branch}.remote`], env)).stdout : "";
  return remotes.includes(upstream) ? upstream : remotes.includes("origin") ? "origin" : remotes[0];
}

/** The full commit `ref` names in the repository (a hash or prefix, a tag, a branch), or null. */
export async function resolveCommit(repoPath: string, ref: string, env: Env): Promise<string | null> {
  if (ref.startsWith("-")) return null;
  const { code, stdout } = await gitQuery(
    repoPath,
    ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`],
    env,
  );
  return code === 0 && /^[0-9a-f]{40,64}$/.test(stdout) ? stdout : null;
}

/** The full ref (`refs/tags/v1`, `refs/heads/main`) a name has in the repository; undefined for a commit. */
export async function fullRefName(repoPath: string, ref: string, env: Env): Promise<string | undefined> {
  // Not `--end-of-options`: with --symbolic-full-name, git prints it back as if it were a name.
  if (ref.startsWith("-")) return undefined;
  const { code, stdout } = await gitQuery(repoPath, ["rev-parse", "--symbolic-full-name", ref], env);
  return code === 0 && stdout.startsWith("refs/") ? stdout : undefined;
}

/** The branch checked out (`main`); null for a detached HEAD; undefined when repoPath is no repository. */
export async function currentBranch(repoPath: string, env: Env): Promise<string | null | undefined> {
  const fromFiles = readBranch(repoPath, env);
  if (fromFiles !== undefined) return fromFiles;
  const { code, stdout } = await gitQuery(repoPath, ["symbolic-ref", "--quiet", "--short", "HEAD"], env);
  if (code === 0 && stdout) return stdout;
  return code === 1 ? null : undefined;
}

/** Whether `ancestor` is `commit` or one of its ancestors; false when either is not in the repository. */
export async function isAncestor(repoPath: string, ancestor: string, commit: string, env: Env): Promise<boolean> {
  const { code } = await gitQuery(repoPath, ["merge-base", "--is-ancestor", ancestor, commit], env);
  return code === 0;
}

/** A commit as the stream and the CLI show it: its first 12 hex digits. */
export const short = (commit: string | null) => (commit ? commit.slice(0, 12) : "(no commit)");

/** The URL of the `origin` remote; undefined when there is none. */
export async function originUrl(repoPath: string, env: Env): Promise<string | undefined> {
  const { code, stdout } = await gitQuery(repoPath, ["remote", "get-url", "origin"], env);
  return code === 0 && stdout ? stdout : undefined;
}
