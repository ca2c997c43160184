import type { DeployResult, HealthCheckResult, RollbackResult, VerifyResult } from "../types.ts";
import { readDeployVariables } from "../config/env.ts";
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
import { refusal, verifyStep } from "./verify.ts";

/**
 * One deploy, start to end: read its variables, record HEAD, pull, check the commit's signature, reload the
 * repository's config, run the script, roll back when asked to. Never throws: whatever goes wrong ends in the
 * result, the `[done]` line and the log files.
 */
export async function runDeploy(options: PlannedDeploy): Promise<DeployResult> {
  // Read before the run starts: the values read from files are secrets its every line is redacted of.
  const variables = readDeployVariables(options.config, options.cwd);
  const run = new DeployRun({ ...options, secrets: [...(options.secrets ?? []), ...variables.secrets] });
  const ctx = contextOf(options, run, variables.vars);
  const { config } = ctx;
  const { step } = run;
  run.start();
  for (const notice of options.notices ?? []) step("config", notice);
  const pulled = new PullState();
  const runOut = captures();
  let ran: StepRun = { exitCode: null, timedOut: false, script: config.runScript };
  let error: string | null = null;
  let healthCheck: HealthCheckResult | undefined;
  let verify: VerifyResult | undefined;
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
    // A deploy without its variables (a missing secret file, a malformed line) does not start at all.
    if (variables.problem) {
      error = `the deploy's variables cannot be read: ${variables.problem}`;
      step("config", `${error}; nothing runs`);
    } else {
      error = options.target ? await resetStep(ctx, pulled, options.target.commit) : await pullStep(ctx, pulled);
      // Signed commits only (docs/security.md "Signed commits"): checked before the repository's config is read.
      verify = await verifyStep(ctx, pulled);
      if (verify && !verify.ok) error ??= refusal(verify);
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
    }
  } catch (caught) {
    error = `internal error: ${(caught as Error).message}`;
    step("deploy", error);
  }
  const { rollback, rolledBack } = rolled;
  ended = true;
  const by = cancelled();
  return run.end(
    {
      ok: by ? false : rollback ? rollback.ok : pulled.success && ran.exitCode === 0 && error === null,
      ...(healthCheck ? { healthCheck } : {}),
      ...(options.target ? { target: options.target } : {}),
      ...(verify ? { verify } : {}),
      pull: pulled.result(),
      run: { ...ran, stdout: runOut.stdout.toString(), stderr: runOut.stderr.toString() },
      error: by ? `cancelled ${by}` : error,
      ...(rollback ? { rollback } : {}),
      rolledBack,
    },
    by ? "cancelled" : "done",
  );
}

/** The deploy's stages' context: a copy of the settings (the reload changes it) and the script's environment. */
function contextOf(options: PlannedDeploy, run: DeployRun, appVariables: Record<string, string>): DeployContext {
  const processEnv = options.env ?? process.env;
  const variables: Record<string, string> = {
    SERVICE_DEPLOY_ID: run.id,
    SERVICE_TRIGGER: options.trigger,
    SERVICE_REPO_PATH: options.config.repoPath,
    // Always set (empty without a forge event), so a value in the service's own environment never passes for one.
    SERVICE_EVENT: run.forge.event ?? "",
    SERVICE_DELIVERY: run.forge.delivery ?? "",
  };
  if (options.app) variables.SERVICE_APP = options.app;
  const env = scriptEnv(processEnv, variables, appVariables);
  return { run, config: { ...options.config }, env, processEnv, cwd: options.cwd, app: options.app };
}
