import { existsSync } from "node:fs";
import { captures } from "./capture.ts";
import type { PullResult, Step } from "../types.ts";
import {
  currentBranch,
  gitFetch,
  gitPull,
  gitResetHard,
  headCommit,
  inspectRepo,
  gitMergeFastForward,
  type GitRunOptions,
  resolveCommit,
  short,
  upstreamOf,
  wantedBranch,
} from "../system/git.ts";
import type { DeployContext } from "./context.ts";
import { afterFailedPull, refuseRewrittenMerge } from "./diverged.ts";

/** What the pull step found, filled as it goes: a step that throws midway still leaves what it learnt. */
export class PullState {
  success = false;
  /** The pull left something nothing may run on (a merge with a force-pushed branch): the deploy stops. */
  refused = false;
  before: string | null = null;
  after: string | null = null;
  /** `git pull` worked: git's automatic maintenance is the deploy's to run after its `[done]` line. */
  maintain = false;
  readonly out = captures();

  result(): PullResult {
    return {
      success: this.success,
      stdout: this.out.stdout.toString(),
      stderr: this.out.stderr.toString(),
      before: this.before,
      after: this.after,
    };
  }
}

/**
 * The pull step (docs/deploy-control.md "The deploy"): HEAD before, `git pull` when there is a remote (or, with
 * `pull: reset`, `git fetch` and `git reset --hard` to the remote branch's tip; after a gate, exactly to the commit it
 * passed), HEAD after. The commits go into
 * the script's environment. Returns what went wrong, or null; `state.refused` says nothing may run.
 */
export async function pullStep(ctx: DeployContext, state: PullState, gated?: string): Promise<string | null> {
  const { config, env, run } = ctx;
  const { step } = run;
  const repo = existsSync(config.repoPath) ? await inspectRepo(config.repoPath, env) : undefined;
  let error: string | null = null;
  if (!repo) {
    error = `repoPath ${config.repoPath} does not exist`;
    step("pull", `failed: ${error}`);
    return error;
  }
  if (!repo.workTree) {
    error = `repoPath ${config.repoPath} is not a git repository`;
    step("pull", `failed: ${error}`);
    return error;
  }
  const before = (state.before = repo.head);
  env.SERVICE_COMMIT_BEFORE = before ?? "";
  if (!repo.hasRemote) {
    state.success = true;
    step("pull", "no remote configured; nothing to pull");
  } else {
    error = gated
      ? await moveToGated(ctx, state, gated)
      : config.pull === "reset"
        ? await fetchAndReset(ctx, state)
        : await gitPullStep(ctx, state);
    if (error) step("pull", `${state.refused ? "refused" : "failed"}: ${error}`);
  }
  const after = (state.after = repo.hasRemote ? await headCommit(config.repoPath, env) : before);
  env.SERVICE_COMMIT = after ?? "";
  const branch = await currentBranch(config.repoPath, env);
  env.SERVICE_REF = branch ? `refs/heads/${branch}` : "";
  if (state.success)
    step("pull", before === after ? `up to date at ${short(after)}` : `${short(before)} -> ${short(after)}`);
  return error;
}

/** `git pull`, and what a divergence made of it (diverged.ts). */
async function gitPullStep(ctx: DeployContext, state: PullState): Promise<string | null> {
  const { config, env, run } = ctx;
  run.step("pull", "git pull");
  const pulled = await gitPull(config.repoPath, {
    env,
    deadline: Date.now() + config.runTimeoutMs,
    onOutput: run.output("pull", state.out),
  });
  const { before } = state;
  if (pulled.exitCode !== 0) {
    const failure =
      pulled.error ?? (pulled.timedOut ? "git pull timed out" : `git pull failed with exit code ${pulled.exitCode}`);
    const { error, fatal } = await afterFailedPull(ctx, before, failure);
    state.refused = fatal;
    return error;
  }
  state.maintain = true;
  const after = await headCommit(config.repoPath, env);
  const refused = before && after && after !== before ? await refuseRewrittenMerge(ctx, before, after) : null;
  state.refused = refused !== null;
  state.success = !refused;
  return refused;
}

/**
 * `pull: reset`: `git fetch` of the app's branch, then `git reset --hard` to the remote's tip of it. Only ever that
 * tip: a commit a delivery names is checked against it afterwards (verify/pushed.ts), never reset to.
 */
async function fetchAndReset(ctx: DeployContext, state: PullState): Promise<string | null> {
  const fetched = await fetchBranchTip(ctx, ctx.run.output("pull", state.out));
  if ("error" in fetched) return fetched.error;
  return resetTo(ctx, state, fetched.tip, `the tip of ${fetched.remote}/${fetched.branch}`);
}

/**
 * The remote's tip of the app's branch (`branch`, else the one checked out), fetched without touching the working
 * tree or HEAD: what `pull: reset` moves to, and the commit a gate waits on (gate/stage.ts).
 */
export async function fetchBranchTip(
  ctx: DeployContext,
  onOutput: GitRunOptions["onOutput"],
  step: Step = "pull",
): Promise<{ tip: string; remote: string; branch: string } | { error: string }> {
  const { config, env, run } = ctx;
  const branch = wantedBranch(config.branch) ?? (await currentBranch(config.repoPath, env));
  if (!branch)
    return {
      error: `${config.pull === "reset" ? "pull: reset" : "the gate"} follows a branch, but the clone is not on one (detached HEAD) and branch is not set: run git -C ${config.repoPath} checkout <branch>, or set branch`,
    };
  const remote = (await upstreamOf(config.repoPath, branch, env))?.remote ?? "origin";
  if (remote.startsWith("-") || branch.startsWith("-")) return { error: `cannot fetch ${branch} of ${remote}` };
  run.step(step, `git fetch ${remote} ${branch}`);
  const options = { env, deadline: Date.now() + config.runTimeoutMs, onOutput };
  const fetched = await gitFetch(config.repoPath, options, [remote, `refs/heads/${branch}`]);
  const tip = fetched.exitCode === 0 ? await resolveCommit(config.repoPath, "FETCH_HEAD", env) : null;
  if (tip) return { tip, remote, branch };
  return {
    error:
      fetched.error ??
      (fetched.timedOut
        ? "git fetch timed out"
        : `git fetch ${remote} ${branch} failed with exit code ${fetched.exitCode}`),
  };
}

/** `git reset --hard` to `commit` (`what` says which it is). */
async function resetTo(ctx: DeployContext, state: PullState, commit: string, what: string): Promise<string | null> {
  const { config, env, run } = ctx;
  run.step("pull", `git reset --hard ${short(commit)} (${what})`);
  const options = { env, deadline: Date.now() + config.runTimeoutMs, onOutput: run.output("pull", state.out) };
  const reset = await gitResetHard(config.repoPath, commit, options);
  state.success = reset.exitCode === 0;
  return state.success
    ? null
    : (reset.error ?? `git reset --hard ${short(commit)} failed with exit code ${reset.exitCode}`);
}

/**
 * After a gate opened: the clone moves exactly to the commit the gate passed, already fetched, never to a tip that
 * moved meanwhile (a newer push is its own deploy). `pull: reset` resets to it; `git pull`'s place takes a
 * fast-forward, and a clone that cannot fast-forward to it (its own commits, a force-push) is refused.
 */
async function moveToGated(ctx: DeployContext, state: PullState, gated: string): Promise<string | null> {
  const { config, env, run } = ctx;
  if (config.pull === "reset") return resetTo(ctx, state, gated, "the commit the gate passed");
  run.step("pull", `git merge --ff-only ${short(gated)} (the commit the gate passed)`);
  const options = { env, deadline: Date.now() + config.runTimeoutMs, onOutput: run.output("pull", state.out) };
  const merged = await gitMergeFastForward(config.repoPath, gated, options);
  state.success = merged.exitCode === 0;
  if (state.success) return null;
  state.refused = true;
  return (
    merged.error ??
    `the clone cannot fast-forward to ${short(gated)} (it has commits of its own, or the remote was force-pushed): set pull: reset, or deploy with service deploy --ref`
  );
}
