import { existsSync } from "node:fs";
import { gitResetHard, headCommit, short } from "../system/git.ts";
import type { PullState } from "./pull.ts";
import type { DeployContext } from "./types.ts";

/**
 * The stage that replaces the pull in a `service rollback`: HEAD before, `git reset --hard <commit>`, HEAD
 * after, recorded like a pull so the record is as usable a later target as any deploy's. Returns what went
 * wrong, or null.
 */
export async function resetStep(ctx: DeployContext, state: PullState, commit: string): Promise<string | null> {
  const { config, env, run } = ctx;
  if (!existsSync(config.repoPath)) {
    run.step("pull", `failed: repoPath ${config.repoPath} does not exist`);
    return `repoPath ${config.repoPath} does not exist`;
  }
  const before = (state.before = await headCommit(config.repoPath, env));
  env.SERVICE_COMMIT_BEFORE = before ?? "";
  run.step("pull", `rollback: git reset --hard ${short(commit)} (from ${short(before)})`);
  const reset = await gitResetHard(config.repoPath, commit, {
    env,
    deadline: Date.now() + config.runTimeoutMs,
    onOutput: run.output("pull", state.out),
  });
  state.success = reset.exitCode === 0;
  const after = (state.after = await headCommit(config.repoPath, env));
  env.SERVICE_COMMIT = after ?? "";
  if (state.success) {
    run.step("pull", `${short(before)} -> ${short(after)}`);
    return null;
  }
  const error = reset.error ?? `git reset --hard ${short(commit)} failed with exit code ${reset.exitCode}`;
  run.step("pull", `failed: ${error}`);
  return error;
}
