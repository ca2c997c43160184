import { existsSync } from "node:fs";
import { captures } from "./capture.ts";
import type { PullResult } from "../types.ts";
import { gitPull, headCommit, inspectRepo, short } from "../system/git.ts";
import type { DeployContext } from "./context.ts";

/** What the pull step found, filled as it goes: a step that throws midway still leaves what it learnt. */
export class PullState {
  success = false;
  before: string | null = null;
  after: string | null = null;
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
 * The pull step (docs/deploy-control.md "The deploy"): HEAD before, `git pull` when there is a remote, HEAD after. The
 * commits go into the script's environment. Returns what went wrong, or null.
 */
export async function pullStep(ctx: DeployContext, state: PullState): Promise<string | null> {
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
    step("pull", "git pull");
    const pulled = await gitPull(config.repoPath, {
      env,
      deadline: Date.now() + config.runTimeoutMs,
      onOutput: run.output("pull", state.out),
    });
    state.success = pulled.exitCode === 0;
    if (!state.success) {
      error =
        pulled.error ?? (pulled.timedOut ? "git pull timed out" : `git pull failed with exit code ${pulled.exitCode}`);
      step("pull", `failed: ${error}`);
    }
  }
  const after = (state.after = repo.hasRemote ? await headCommit(config.repoPath, env) : before);
  env.SERVICE_COMMIT = after ?? "";
  if (state.success)
    step("pull", before === after ? `up to date at ${short(after)}` : `${short(before)} -> ${short(after)}`);
  return error;
}
