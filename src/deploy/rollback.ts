import { gitResetHard, short } from "../system/git.ts";
import type { RollbackResult } from "../types.ts";
import { captures } from "../steps/capture.ts";
import { healthStep } from "../steps/health.ts";
import type { PullState } from "../steps/pull.ts";
import { reloadFromRepo } from "../steps/repo-config.ts";
import { describeFailure, scriptStep } from "../steps/script.ts";
import type { DeployContext } from "../steps/context.ts";
import { refusal } from "../verify/signatures.ts";
import { verifyCheckout } from "../verify/stage.ts";

/** Back to the commit from before the pull, and the run script again there (docs/deploy-control.md "Rollback"). */
export async function rollBack(
  ctx: DeployContext,
  pulled: PullState,
): Promise<{ rollback?: RollbackResult; rolledBack: boolean }> {
  const { config, env, run } = ctx;
  const { step } = run;
  const { before, after } = pulled;
  if (!before) {
    step("rollback", "skipped: there is no commit from before the pull to return to");
    return { rolledBack: false };
  }
  // A reset to the same commit would only run the same script again: there is nothing to roll back to.
  if (before === after) {
    step("rollback", `skipped: the pull changed nothing (still at ${short(before)}); there is nothing to roll back to`);
    return { rolledBack: false };
  }
  const out = captures();
  const result = (fields: Partial<RollbackResult>): RollbackResult => ({
    to: before,
    from: after,
    ok: false,
    exitCode: null,
    timedOut: false,
    error: null,
    ...fields,
    stdout: out.stdout.toString(),
    stderr: out.stderr.toString(),
  });
  step("rollback", `git reset --hard ${short(before)} (from ${short(after)})`);
  const reset = await gitResetHard(config.repoPath, before, {
    env,
    deadline: Date.now() + 60_000,
    onOutput: run.output("rollback", out),
  });
  if (reset.exitCode !== 0) {
    const error = reset.error ?? `git reset --hard failed with exit code ${reset.exitCode}`;
    step("rollback", `failed: ${error}`);
    return { rollback: result({ error }), rolledBack: false };
  }
  // The previous commit runs again only if it is signed too (docs/security.md "Signed commits").
  const verified = await verifyCheckout(ctx, before, "rollback");
  if (verified && !verified.ok) return { rollback: result({ error: refusal(verified) }), rolledBack: true };
  reloadFromRepo(config, ctx.cwd, ctx.processEnv, step, ctx.app);
  step("rollback", "running the run script again at the previous commit");
  const again = await scriptStep(ctx, "rollback", run.output("rollback", out));
  // The previous commit must come up too: its redeploy is health-checked like any deploy.
  const healthCheck = again.exitCode === 0 ? await healthStep(ctx) : undefined;
  const ok = again.exitCode === 0 && healthCheck?.ok !== false;
  step("rollback", ok ? "succeeded" : "failed");
  const failure =
    again.exitCode !== 0 ? (describeFailure(again) ?? `exit code ${again.exitCode}`) : (healthCheck?.error ?? null);
  const rollback = result({
    ok,
    exitCode: again.exitCode,
    timedOut: again.timedOut,
    error: failure,
    ...(healthCheck ? { healthCheck } : {}),
  });
  return { rollback, rolledBack: true };
}
