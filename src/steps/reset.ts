import { existsSync } from "node:fs";
import {
  defaultRemote,
  fullRefName,
  gitFetch,
  gitResetHard,
  headCommit,
  inspectRepo,
  resolveCommit,
  short,
} from "../system/git.ts";
import { shown } from "../system/shown.ts";
import type { RollbackTarget } from "../types.ts";
import type { PullState } from "./pull.ts";
import type { DeployContext } from "./context.ts";

/**
 * The stage that replaces the pull in a `service rollback` and a deploy of a ref: HEAD before, `git reset --hard
 * <commit>`, HEAD after, recorded like a pull so the record is as usable a later target as any deploy's. A ref's
 * commit that is not in the repository yet is fetched first. Returns what went wrong, or null.
 */
export async function resetStep(ctx: DeployContext, state: PullState, target: RollbackTarget): Promise<string | null> {
  const { config, env, run } = ctx;
  const { commit } = target;
  if (!existsSync(config.repoPath)) {
    run.step("pull", `failed: repoPath ${config.repoPath} does not exist`);
    return `repoPath ${config.repoPath} does not exist`;
  }
  const what = target.ref === undefined ? "rollback" : `ref ${shown(target.ref)}`;
  const deadline = Date.now() + config.runTimeoutMs;
  if (target.ref !== undefined && !(await resolveCommit(config.repoPath, commit, env))) {
    const repo = await inspectRepo(config.repoPath, env);
    if (repo.hasRemote) {
      run.step("pull", `${what}: git fetch (${short(commit)} is not in the repository yet)`);
      await gitFetch(config.repoPath, { env, deadline, onOutput: run.output("pull", state.out) });
    }
    if (!(await resolveCommit(config.repoPath, commit, env))) {
      const error = `${what}: commit ${short(commit)} is not in the repository${repo.hasRemote ? " after git fetch" : ""}`;
      run.step("pull", `failed: ${error}`);
      return error;
    }
  }
  // A tag deployed is fetched into the clone, as the remote has it: `git describe` in the script names it.
  if (target.tag !== undefined) await fetchTag(ctx, state, target.tag, deadline);
  env.SERVICE_REF = await refNamed(config.repoPath, target, env);
  const before = (state.before = await headCommit(config.repoPath, env));
  env.SERVICE_COMMIT_BEFORE = before ?? "";
  run.step("pull", `${what}: git reset --hard ${short(commit)} (from ${short(before)})`);
  const reset = await gitResetHard(config.repoPath, commit, { env, deadline, onOutput: run.output("pull", state.out) });
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

/** The tag from the remote into the clone's `refs/tags/`, as the remote has it; a failure is said, not fatal. */
async function fetchTag(ctx: DeployContext, state: PullState, tag: string, deadline: number): Promise<void> {
  const { config, env, run } = ctx;
  const remote = await defaultRemote(config.repoPath, env);
  if (!remote) return;
  const fetched = await gitFetch(config.repoPath, { env, deadline, onOutput: run.output("pull", state.out) }, [
    "--quiet",
    "--no-tags",
    "--",
    remote,
    `+refs/tags/${tag}:refs/tags/${tag}`,
  ]);
  if (fetched.exitCode !== 0)
    run.step("pull", `warning: tag ${shown(tag)} could not be fetched from ${remote} (exit code ${fetched.exitCode})`);
}

/** SERVICE_REF: the tag or branch in full (`refs/tags/v1.4.2`), else the ref as named; empty for a rollback. */
async function refNamed(repoPath: string, target: RollbackTarget, env: NodeJS.ProcessEnv): Promise<string> {
  if (target.tag !== undefined) return `refs/tags/${target.tag}`;
  if (target.ref === undefined) return "";
  if (target.ref.startsWith("refs/") || target.deployId !== null) return target.ref;
  return (await fullRefName(repoPath, target.ref, env)) ?? target.ref;
}
