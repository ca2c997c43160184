/**
 * The commit a push would deploy, learnt without changing anything live: the app's branch fetched into a private ref
 * (`refs/service/tips/<branch>`), never FETCH_HEAD, HEAD, the working tree or `refs/remotes/*` (which a deploy's
 * `git pull` in the same clone may hold a lock on: `--refmap=` keeps git from updating them too). Then what changed
 * since a commit, and the tip's message.
 */
import { resolve } from "node:path";
import { currentBranch, gitFetch, gitQuery, resolveCommit, upstreamOf, wantedBranch } from "../system/git.ts";

type Env = NodeJS.ProcessEnv;

/** How long the fetch of a tip may take: a webhook's answer waits for it. */
export const TIP_FETCH_TIMEOUT_MS = 30_000;

/** Where the fetched tip of `branch` is kept in the clone. */
export const tipRef = (branch: string) => `refs/service/tips/${branch}`;

/**
 * The fetches into one clone's private ref, one at a time: two apps of a monorepo share a clone, and deliveries of
 * one push to both arrive together; two fetches updating one ref at once fail on its lock.
 */
const fetches = new Map<string, Promise<unknown>>();

function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
  const mine = (fetches.get(key) ?? Promise.resolve()).then(work);
  const settled = mine.then(
    () => {},
    () => {},
  );
  fetches.set(key, settled);
  void settled.then(() => {
    if (fetches.get(key) === settled) fetches.delete(key);
  });
  return mine;
}

/**
 * Fetches the tip of the app's branch (`branch`, else the one checked out) from its upstream's remote (else
 * `origin`), as `pull: reset` finds them (steps/pull.ts `fetchBranchTip`); the tip, or why it could not.
 */
export async function fetchTip(
  app: { repoPath: string; branch?: string },
  env: Env = process.env,
  timeoutMs = TIP_FETCH_TIMEOUT_MS,
): Promise<{ tip: string; remote: string; branch: string } | { error: string }> {
  const { repoPath } = app;
  const branch = wantedBranch(app.branch) ?? (await currentBranch(repoPath, env));
  if (!branch) return { error: `the clone ${repoPath} is on no branch and branch is not set` };
  const remote = (await upstreamOf(repoPath, branch, env))?.remote ?? "origin";
  if (remote.startsWith("-") || branch.startsWith("-")) return { error: `cannot fetch ${branch} of ${remote}` };
  const refspec = `+refs/heads/${branch}:${tipRef(branch)}`;
  const { fetched, tip } = await oneAtATime(`${resolve(repoPath)}\0${tipRef(branch)}`, async () => {
    const fetched = await gitFetch(repoPath, { env, deadline: Date.now() + timeoutMs, onOutput: () => {} }, [
      "--quiet",
      "--no-write-fetch-head",
      "--refmap=",
      "--no-tags",
      remote,
      refspec,
    ]);
    return { fetched, tip: fetched.exitCode === 0 ? await resolveCommit(repoPath, tipRef(branch), env) : null };
  });
  if (tip) return { tip, remote, branch };
  const why = fetched.timedOut
    ? `did not answer within ${timeoutMs / 1000} s`
    : (fetched.error ?? `failed with exit code ${fetched.exitCode}`);
  return { error: `git fetch ${remote} ${branch} ${why}` };
}

/** The files that differ between two commits (both sides of a rename), or undefined when git cannot tell. */
export async function changedFiles(repoPath: string, from: string, to: string, env: Env = process.env) {
  const diff = await gitQuery(repoPath, ["diff", "--name-only", "--no-renames", "-z", from, to, "--"], env);
  return diff.code === 0 ? diff.stdout.split("\0").filter(Boolean) : undefined;
}

/** The files of a commit's tree, or undefined when git cannot tell (`service check`). */
export async function filesAt(repoPath: string, commit: string, env: Env = process.env) {
  const tree = await gitQuery(repoPath, ["ls-tree", "-r", "-z", "--name-only", commit], env);
  return tree.code === 0 ? tree.stdout.split("\0").filter(Boolean) : undefined;
}

/** The whole message of a commit, or undefined. */
export async function messageOf(repoPath: string, commit: string, env: Env = process.env) {
  const log = await gitQuery(repoPath, ["log", "-1", "--format=%B", commit, "--"], env);
  return log.code === 0 ? log.stdout : undefined;
}
