/**
 * What `git pull` did when the clone and its remote branch had diverged (docs/deploy-control.md "After a
 * force-push"): a pull that failed is told apart (diverged, or a merge or rebase left half-done, which is
 * aborted), and a merge with a branch a force-push rewrote is undone before anything runs on it.
 */
import { captures } from "./capture.ts";
import type { DeployContext } from "./context.ts";
import {
  currentBranch,
  gitAbort,
  gitResetHard,
  isAncestor,
  resolveCommit,
  short,
  type Upstream,
  upstreamOf,
  wasOnRef,
} from "../system/git.ts";

/** The two ways out of a clone whose remote branch was rewritten. */
export const waysOut = (branch: string) =>
  `deploy the remote's branch once with service deploy --ref ${branch}, or set pull: reset to follow force-pushes`;

/** `origin/main` of `refs/remotes/origin/main`. */
const shortRef = (ref: string) => ref.replace(/^refs\/remotes\//, "");

/** The clone's branch's upstream and its tip, as the last fetch left them; undefined without one. */
export async function upstreamNow(
  repoPath: string,
  env: Record<string, string | undefined>,
): Promise<{ upstream: Upstream; tip: string | null; name: string } | undefined> {
  const branch = await currentBranch(repoPath, env);
  const upstream = branch ? await upstreamOf(repoPath, branch, env) : null;
  if (!upstream) return undefined;
  return { upstream, tip: await resolveCommit(repoPath, upstream.ref, env), name: shortRef(upstream.ref) };
}

/**
 * How `before` and the remote branch's `tip` stand: undefined when `tip` contains `before`; "rewritten" when the
 * remote branch had `before` and lost it (a force-push); "own" when the clone carries commits of its own, the
 * remote having others (or, with `ahead`, none: the clone is only ahead of it).
 */
export async function divergence(
  repoPath: string,
  upstream: Upstream,
  before: string,
  tip: string,
  env: Record<string, string | undefined>,
  ahead = false,
): Promise<"rewritten" | "own" | undefined> {
  if (before === tip || (await isAncestor(repoPath, before, tip, env))) return undefined;
  if (await wasOnRef(repoPath, upstream.ref, before, env)) return "rewritten";
  return ahead || !(await isAncestor(repoPath, tip, before, env)) ? "own" : undefined;
}

/** What a divergence means, and the way out of it: one sentence. */
function diverged(kind: "rewritten" | "own", name: string, before: string, branch: string, path: string): string {
  return kind === "rewritten"
    ? `the clone and the remote have diverged (${name} was force-pushed: it no longer contains HEAD ${short(before)}): ${waysOut(branch)}`
    : `the clone and the remote have diverged (the clone has commits of its own that ${name} does not have): ` +
        `merge or rebase them by hand in ${path}, or drop them: ${waysOut(branch)}`;
}

/**
 * After a `git pull` that failed: a merge or rebase left half-done is aborted (no conflict marker stays in the
 * tree, the clone is back at `before`), and the error says why the pull failed when the branches diverged. `fatal`
 * is set when the tree could not be brought back: nothing may run on it.
 */
export async function afterFailedPull(
  ctx: DeployContext,
  before: string | null,
  failure: string,
): Promise<{ error: string; fatal: boolean }> {
  const { config, env, run } = ctx;
  const half = (await resolveCommit(config.repoPath, "MERGE_HEAD", env))
    ? "merge"
    : (await resolveCommit(config.repoPath, "REBASE_HEAD", env))
      ? "rebase"
      : undefined;
  if (half) {
    run.step("pull", `git pull's ${half} conflicted: git ${half} --abort`);
    const aborted = await gitAbort(config.repoPath, half, {
      env,
      deadline: Date.now() + config.runTimeoutMs,
      onOutput: run.output("pull", captures()),
    });
    if (aborted.exitCode !== 0) {
      const error =
        `git pull's ${half} conflicted, and git ${half} --abort failed: the tree may hold conflict markers; ` +
        `repair it by hand (git -C ${config.repoPath} status); nothing was run`;
      return { error, fatal: true };
    }
  }
  // Asked once the clone is back on its branch (a rebase stops on a detached HEAD).
  const at = await upstreamNow(config.repoPath, env);
  const kind = before && at?.tip ? await divergence(config.repoPath, at.upstream, before, at.tip, env) : undefined;
  const why = kind && at ? diverged(kind, at.name, before!, at.upstream.branch, config.repoPath) : undefined;
  if (!half) return { error: why ?? failure, fatal: false };
  const head = await resolveCommit(config.repoPath, "HEAD", env);
  const what = `git pull's ${half} with ${at?.name ?? "the remote branch"} conflicted`;
  return { error: `${what}; aborted: the clone is back at ${short(head)}${why ? `; ${why}` : ""}`, fatal: false };
}

/**
 * After a `git pull` that worked and moved HEAD: a merge with a remote branch that no longer contains `before`
 * (a force-push) is a tree that exists nowhere on the remote. The clone goes back to `before`, and the refusal is
 * returned; null when what was pulled may deploy (a fast-forward, or a merge with the clone's own commits).
 */
export async function refuseRewrittenMerge(ctx: DeployContext, before: string, after: string): Promise<string | null> {
  const { config, env, run } = ctx;
  // A fast-forward (the common pull) is the upstream's tip: one git call, and nothing more to ask.
  if ((await resolveCommit(config.repoPath, "@{upstream}", env)) === after) return null;
  const at = await upstreamNow(config.repoPath, env);
  if (!at?.tip || after === at.tip) return null;
  if ((await divergence(config.repoPath, at.upstream, before, at.tip, env)) !== "rewritten") return null;
  run.step("pull", `git reset --hard ${short(before)}: the merge with a force-pushed ${at.name} does not deploy`);
  const reset = await gitResetHard(config.repoPath, before, {
    env,
    deadline: Date.now() + config.runTimeoutMs,
    onOutput: run.output("pull", captures()),
  });
  const back =
    reset.exitCode === 0
      ? `the clone is back at ${short(before)}`
      : `git reset --hard ${short(before)} failed too: repair the clone by hand`;
  return (
    `git pull merged ${at.name} into HEAD ${short(before)}, but ${at.name} was force-pushed: it no longer ` +
    `contains ${short(before)}, and the merge exists nowhere on the remote; ${back}; ` +
    `${waysOut(at.upstream.branch)}; nothing was run`
  );
}
