import { existsSync } from "node:fs";
import { currentBranch, isAncestor, resolveCommit, short, wantedBranch } from "../system/git.ts";
import type { PullState } from "../steps/pull.ts";
import type { DeployContext } from "../steps/context.ts";

/**
 * Deploying what was pushed, from the branch it was pushed to (docs/deploy-control.md "What was pushed"): with
 * `branch` set, a checkout left on another branch is refused before anything runs; and after the pull, HEAD must
 * be the commit the forge's delivery named, or a descendant of it.
 */

/**
 * Refuses a deploy whose checkout is not on `branch` (another branch, a detached HEAD): a pull there would deploy
 * that other branch and say ok. Returns the error, or null (also when repoPath is no repository: the pull says so).
 */
export async function checkoutStep(ctx: DeployContext): Promise<string | null> {
  const { config, env, run } = ctx;
  const wanted = wantedBranch(config.branch);
  if (!wanted || !existsSync(config.repoPath)) return null;
  const current = await currentBranch(config.repoPath, env);
  if (current === undefined || current === wanted) return null;
  const where = current === null ? "is not on a branch (detached HEAD)" : `is on branch ${current}`;
  const error =
    `the checkout in ${config.repoPath} ${where}, but this app deploys branch ${wanted}: ` +
    `run git -C ${config.repoPath} checkout ${wanted}, then deploy again`;
  run.step("deploy", `refused: ${error}`);
  return error;
}

/**
 * After a pull that worked: HEAD must be `pushed` (the commit the delivery named) or contain it. Otherwise the
 * repository pulled is not the one the forge delivered for, or it lags behind: the script does not run. Returns
 * the error, or null.
 */
export async function verifyPushStep(ctx: DeployContext, pulled: PullState, pushed: string): Promise<string | null> {
  const { config, env, run } = ctx;
  const head = pulled.after;
  if (!head) return null;
  if (head === pushed) {
    run.step("pull", `HEAD is the pushed commit ${short(pushed)}`);
    return null;
  }
  const known = await resolveCommit(config.repoPath, pushed, env);
  if (known && (await isAncestor(config.repoPath, known, head, env))) {
    run.step("pull", `HEAD ${short(head)} contains the pushed commit ${short(pushed)}`);
    return null;
  }
  const why = known
    ? `HEAD ${short(head)} does not contain the pushed commit ${short(pushed)}`
    : `the pushed commit ${short(pushed)} is not in the repository after the pull`;
  const error = `${why}: the remote pulled from is not the repository the delivery came from, or lags behind it (git -C ${config.repoPath} remote -v shows it); nothing was run`;
  run.step("pull", `refused: ${error}`);
  return error;
}
