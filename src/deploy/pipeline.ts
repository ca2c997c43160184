import type { CommitInfo, DeployResult, HealthCheckResult, RollbackResult } from "../types.ts";
import { commitInfos } from "../system/git.ts";
import { KILL_GRACE_MS } from "../system/process.ts";
import { captures } from "./capture.ts";
import { scriptEnv } from "./env.ts";
import { healthStep } from "./health.ts";
import { PullState, pullStep } from "./pull.ts";
import { reloadFromRepo } from "./repo-config.ts";
import { resetStep } from "./reset.ts";
import { rollBack } from "./rollback.ts";
import { DeployRun } from "./run.ts";
import { describeFailure, type StepRun, scriptStep } from "./script.ts";
import type { DeployContext, PlannedDeploy } from "./types.ts";
import { checkoutStep, verifyPushStep } from "./verify-push.ts";

/**
 * One deploy, start to end: record HEAD, pull, reload the repository's config, run the script, roll back when
 * asked to. Never throws: whatever goes wrong ends in the result, the `[done]` line and the log files.
 */
export async function runDeploy(options: PlannedDeploy): Promise<DeployResult> {
  const run = new DeployRun(options);
  const ctx = contextOf(options, run);
  const { config } = ctx;
  const { step } = run;
  run.start();
  if (options.forced) step("deploy", `forced: deploys are paused: ${options.forced}`);
  for (const notice of options.notices ?? []) step("config", notice);
  const pulled = new PullState();
  const runOut = captures();
  let ran: StepRun = { exitCode: null, timedOut: false, script: config.runScript };
  let error: string | null = null;
  let healthCheck: HealthCheckResult | undefined;
  let rolled: { rollback?: RollbackResult; rolledBack: boolean } = { rolledBack: false };
  // docs/deploy-control.md "Cancel: `service cancel <id>`": its commands are stopped (deployer.ts); what has not started does not start, but a
  // script cut short is rolled back like any failed one.
  let ended = false;
  const cancelled = () => options.cancellation?.reason;
  // Nothing follows the `[done]` line: a cancel that comes while the deploy ends changes nothing.
  options.cancellation?.onCancel(
    (by) =>
      ended ||
      step("deploy", `cancelled ${by}: stopping its commands (SIGTERM, then SIGKILL after ${KILL_GRACE_MS / 1000} s)`),
  );
  try {
    // A refusal (the checkout on another branch, HEAD not what was pushed) runs nothing more.
    let refused = await checkoutStep(ctx);
    if (!refused) {
      error = options.target ? await resetStep(ctx, pulled, options.target) : await pullStep(ctx, pulled);
      if (!error && options.pushed && !cancelled()) refused = await verifyPushStep(ctx, pulled, options.pushed);
    }
    if (refused) error = refused;
    else if (!cancelled()) {
      // Post-pull reload (docs/configuration.md "Config from the repository"), then the run script.
      reloadFromRepo(config, ctx.cwd, ctx.processEnv, step, ctx.app);
      ran = await scriptStep(ctx, "run", run.output("run", runOut));
      if (ran.exitCode !== 0 && !error) error = describeFailure(ran);
      // A script that exited 0 has not proven the app is up (docs/deploy-control.md "Health check").
      if (ran.exitCode === 0 && !error && !cancelled()) healthCheck = await healthStep(ctx);
      if (healthCheck && !healthCheck.ok) error = healthCheck.error;
      // Rollback (docs/deploy-control.md "Rollback").
      if ((ran.exitCode !== 0 || healthCheck?.ok === false) && config.rollbackOnFailure)
        rolled = await rollBack(ctx, pulled);
    }
  } catch (caught) {
    error = `internal error: ${(caught as Error).message}`;
    step("deploy", error);
  }
  const { rollback, rolledBack } = rolled;
  const commits = await commitsOf(ctx, rolledBack && rollback ? rollback.to : pulled.after, pulled.before);
  ended = true;
  const by = cancelled();
  return run.end(
    {
      ...commits,
      ok: by ? false : rollback ? rollback.ok : pulled.success && ran.exitCode === 0 && error === null,
      ...(healthCheck ? { healthCheck } : {}),
      ...(options.target ? { target: options.target } : {}),
      pull: pulled.result(),
      run: { ...ran, stdout: runOut.stdout.toString(), stderr: runOut.stderr.toString() },
      error: by ? `cancelled ${by}` : error,
      ...(rollback ? { rollback } : {}),
      rolledBack,
    },
    by ? "cancelled" : "done",
  );
}

/** What went live and what was live before, in words (never throws: a record without them is still a record). */
async function commitsOf(
  ctx: DeployContext,
  live: string | null,
  before: string | null,
): Promise<{ commit: CommitInfo | null; previousCommit: CommitInfo | null }> {
  try {
    const found = await commitInfos(
      ctx.config.repoPath,
      [live, before].filter((c) => c !== null),
      ctx.env,
    );
    return { commit: (live && found.get(live)) || null, previousCommit: (before && found.get(before)) || null };
  } catch {
    return { commit: null, previousCommit: null };
  }
}

/** The deploy's stages' context: a copy of the settings (the reload changes it) and the script's environment. */
function contextOf(options: PlannedDeploy, run: DeployRun): DeployContext {
  const processEnv = options.env ?? process.env;
  const variables: Record<string, string> = {
    SERVICE_DEPLOY_ID: run.id,
    SERVICE_TRIGGER: options.trigger,
    // Always set (empty when unknown), like SERVICE_EVENT below.
    SERVICE_ACTOR: run.actor ?? "",
    SERVICE_REPO_PATH: options.config.repoPath,
    // Always set (empty without a forge event), so a value in the service's own environment never passes for one.
    SERVICE_EVENT: run.forge.event ?? "",
    SERVICE_DELIVERY: run.forge.delivery ?? "",
  };
  if (options.app) variables.SERVICE_APP = options.app;
  const env = scriptEnv(processEnv, variables);
  return { run, config: { ...options.config }, env, processEnv, cwd: options.cwd, app: options.app };
}
