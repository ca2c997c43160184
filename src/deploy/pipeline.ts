import type { ResolvedConfig } from "../config/schema.ts";
import type { Cancellation } from "../queue/cancel.ts";
import { captures } from "./capture.ts";
import type {
  DeployResult,
  DeploySink,
  HealthCheckResult,
  RollbackResult,
  RollbackTarget,
  RunResult,
  Step,
  Trigger,
} from "../types.ts";
import { gitResetHard } from "../system/git.ts";
import { healthStep, type HealthSettings } from "./health.ts";
import type { Served } from "../queue/latest.ts";
import type { Logger } from "../system/logger.ts";
import { KILL_GRACE_MS } from "../system/process.ts";
import { PullState, pullStep, short } from "./pull.ts";
import { reloadFromRepo } from "./repo-config.ts";
import { resetStep } from "../control/rollback.ts";
import { DeployRun, type PlannedDeploy } from "./run.ts";
import { describeTimeout, runScript } from "./script.ts";

/** What a deploy needs of the configuration (a single app's, or one `apps` entry's). */
export type DeploySettings = Pick<
  ResolvedConfig,
  | "repoPath"
  | "runScript"
  | "runTimeoutMs"
  | "rollbackOnFailure"
  | "queueLimit"
  | "keepDeploys"
  | "keepDays"
  | "maxLogBytes"
  | "status"
  | "notify"
> &
  HealthSettings;

export interface DeployOptions {
  /** The configuration in force when the deploy was requested. */
  config: DeploySettings;
  /** The deploy id. @default a new UUID */
  id?: string;
  /** The app deployed (multi-app mode); named in the logs and the script's environment. */
  app?: string;
  trigger: Trigger;
  /** A `service rollback`: reset to this commit instead of pulling (README "service rollback"). */
  target?: RollbackTarget;
  /** The forge event and delivery id of a webhook deploy (recorded, and given to the script). */
  event?: string | null;
  delivery?: string | null;
  /** Working directory: where `.service/logs/` lives and relative config paths resolve. */
  cwd: string;
  /** Receives every event as it happens (the HTTP stream, the terminal). The log files always get them too. */
  sink?: DeploySink;
  /** Environment of git and the run script (secrets removed). @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Problems with the configuration in force, said at the start of the deploy (an invalid config file). */
  notices?: string[];
  /** Secrets to redact from the output, the result and the logs (the webhook secrets). */
  secrets?: string[];
  /** With `queuePolicy: latest`: the requests it serves, filled in while it waits (see latest.ts). */
  served?: Served;
  /** Set when the deploy is cancelled while it runs (`service cancel`). */
  cancellation?: Cancellation;
  /** Where the deploy's own warnings go (a log that cannot be written). @default consola.withTag("service") */
  logger?: Logger;
}

/** The environment of git and the run script: the service's own, without secrets, with the deploy context. */
export function scriptEnv(env: NodeJS.ProcessEnv, context: Record<string, string>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env, ...context };
  delete out.SERVICE_SECRET;
  delete out.SERVICE_ADMIN_TOKEN;
  delete out.SERVICE_STATUS_TOKEN;
  return out;
}

/** What every stage of one deploy works with. */
export interface DeployContext {
  run: DeployRun;
  /** The settings in force: the post-pull reload changes the run script and its timeout. */
  config: DeploySettings;
  /** Environment of git and the run script: the service's own without secrets, with the deploy's variables. */
  env: Record<string, string | undefined>;
  /** The service's own environment, where the reload reads SERVICE_* settings. */
  processEnv: NodeJS.ProcessEnv;
  cwd: string;
  app?: string;
}

type StepRun = Omit<RunResult, "stdout" | "stderr"> & { error?: string };

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
  for (const notice of options.notices ?? []) step("config", notice);
  const pulled = new PullState();
  const runOut = captures();
  let ran: StepRun = { exitCode: null, timedOut: false, script: config.runScript };
  let error: string | null = null;
  let healthCheck: HealthCheckResult | undefined;
  let rolled: { rollback?: RollbackResult; rolledBack: boolean } = { rolledBack: false };
  // README "service cancel": its commands are stopped (deployer.ts); what has not started does not start, but a
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
    error = options.target ? await resetStep(ctx, pulled, options.target.commit) : await pullStep(ctx, pulled);
    if (!cancelled()) {
      // Post-pull reload (README "Config from the repository"), then the run script.
      reloadFromRepo(config, ctx.cwd, ctx.processEnv, step, ctx.app);
      ran = await runStep(ctx, "run", run.output("run", runOut));
      if (ran.exitCode !== 0 && !error) error = describeFailure(ran);
      // A script that exited 0 has not proven the app is up (README "Health check").
      if (ran.exitCode === 0 && !error && !cancelled()) healthCheck = await healthStep(ctx);
      if (healthCheck && !healthCheck.ok) error = healthCheck.error;
      // Rollback (README "Rollback").
      if ((ran.exitCode !== 0 || healthCheck?.ok === false) && config.rollbackOnFailure)
        rolled = await rollBack(ctx, pulled);
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
function contextOf(options: PlannedDeploy, run: DeployRun): DeployContext {
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
  const env = scriptEnv(processEnv, variables);
  return { run, config: { ...options.config }, env, processEnv, cwd: options.cwd, app: options.app };
}

function describeFailure(run: StepRun): string | null {
  if (run.error) return run.error;
  if (run.timedOut) return `run script timed out`;
  return null;
}

async function runStep(
  ctx: DeployContext,
  name: Step,
  onOutput: (stream: "stdout" | "stderr", data: Uint8Array) => void,
): Promise<StepRun> {
  const { config, env, run } = ctx;
  const started = Date.now();
  const outcome = await runScript(config.runScript, {
    cwd: config.repoPath,
    env,
    timeoutMs: config.runTimeoutMs,
    onOutput,
    onLine: (line) => run.step(name, `$ ${line}`),
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (outcome.error) run.step(name, outcome.error);
  else if (outcome.timedOut) run.step(name, describeTimeout(config.runTimeoutMs, outcome.stopped));
  else run.step(name, `exit code ${outcome.exitCode} after ${seconds} s`);
  return {
    exitCode: outcome.exitCode,
    timedOut: outcome.timedOut,
    script: config.runScript,
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

/** Back to the commit from before the pull, and the run script again there (README "Rollback"). */
async function rollBack(
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
  reloadFromRepo(config, ctx.cwd, ctx.processEnv, step, ctx.app);
  step("rollback", "running the run script again at the previous commit");
  const again = await runStep(ctx, "rollback", run.output("rollback", out));
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
