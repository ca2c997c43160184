import { existsSync } from "node:fs";
import { relative, resolve, isAbsolute } from "node:path";
import { CONFIG_FILE_NAMES, readConfigFile } from "../config.ts";
import { envConfig, type ResolvedConfig } from "../config-schema.ts";
import type { DeployEvent, DeployResult, DeploySink, RollbackResult, RunResult, Step, Trigger } from "./events.ts";
import { gitPull, gitResetHard, headCommit, inspectRepo } from "./git.ts";
import { DeployLog, pruneLogs } from "./log.ts";
import { OutputRedactor, Redaction } from "./redact.ts";
import { runScript } from "./script.ts";
import { outboundSink } from "../notify/sink.ts";

/** Most bytes of one output stream kept in the result (the .log file and the live stream have everything). */
export const MAX_CAPTURE_BYTES = 1024 * 1024;

/** Collects one output stream as text, up to MAX_CAPTURE_BYTES. */
class Capture {
  private text = "";
  private bytes = 0;
  private dropped = 0;
  private readonly decoder = new TextDecoder();

  add(data: Uint8Array): void {
    const room = MAX_CAPTURE_BYTES - this.bytes;
    if (room <= 0) {
      this.dropped += data.length;
      return;
    }
    const kept = data.length > room ? data.subarray(0, room) : data;
    this.dropped += data.length - kept.length;
    this.bytes += kept.length;
    this.text += this.decoder.decode(kept, { stream: true });
  }

  toString(): string {
    const tail = this.decoder.decode();
    return this.dropped ? `${this.text}${tail}\n[truncated: ${this.dropped} more bytes in the .log file]\n` : this.text + tail;
  }
}

/** What a deploy needs of the configuration (a single app's, or one `apps` entry's). */
export type DeploySettings = Pick<
  ResolvedConfig,
  "repoPath" | "runScript" | "runTimeoutMs" | "rollbackOnFailure" | "queueLimit" | "keepDeploys" | "keepDays" | "maxLogBytes" | "status" | "notify"
>;

export interface DeployOptions {
  /** The configuration in force when the deploy was requested. */
  config: DeploySettings;
  /** The deploy id. @default a new UUID */
  id?: string;
  /** The app deployed (multi-app mode); named in the logs and the script's environment. */
  app?: string;
  trigger: Trigger;
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
}

/** The repository's own config file (rule 4): auto-detected names, or SERVICE_CONFIG when it points inside. */
export function repoConfigFile(repoPath: string, cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  if (env.SERVICE_CONFIG) {
    const file = resolve(cwd, env.SERVICE_CONFIG);
    const rel = relative(repoPath, file);
    const inside = rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
    return inside && existsSync(file) ? file : undefined;
  }
  return CONFIG_FILE_NAMES.map((name) => resolve(repoPath, name)).find((file) => existsSync(file));
}

/** The environment of git and the run script: the service's own, without secrets, with the deploy context. */
export function scriptEnv(env: NodeJS.ProcessEnv, context: Record<string, string>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env, ...context };
  delete out.SERVICE_SECRET;
  delete out.SERVICE_STATUS_TOKEN;
  return out;
}

/**
 * One deploy, start to end: record HEAD, pull, reload the repository's config, run the script, roll back when
 * asked to. Never throws: whatever goes wrong ends in the result, the `[done]` line and the log files.
 */
export async function runDeploy(options: DeployOptions): Promise<DeployResult> {
  const id = options.id ?? crypto.randomUUID();
  const startedAt = new Date();
  const config = { ...options.config };
  const env = options.env ?? process.env;
  const redaction = new Redaction(options.secrets ?? []);
  const log = new DeployLog(
    options.cwd,
    { id, startedAt, trigger: options.trigger, repoPath: config.repoPath, runScript: redaction.text(config.runScript), app: options.app },
    config.maxLogBytes,
  );
  const redactors: OutputRedactor[] = [];
  const outbound = outboundSink({ id, app: options.app, trigger: options.trigger, cwd: options.cwd, repoPath: config.repoPath, config, env, log, secrets: options.secrets ?? [] });
  const emit = (event: DeployEvent) => {
    // The service's own lines come after the output before them: release what the redactors still hold.
    if (event.type !== "output") for (const redactor of redactors) redactor.flush();
    log.write(event);
    outbound?.(event);
    try {
      options.sink?.(event);
    } catch {
      // A sink that fails (a client gone) never touches the deploy.
    }
  };
  const step = (name: Step, text: string) => emit({ type: "step", step: name, text: redaction.text(text) });
  const output = (name: Step, captures: { stdout: Capture; stderr: Capture }) => {
    const redactorFor = (stream: "stdout" | "stderr") => {
      const redactor = new OutputRedactor(redaction, (data) => {
        captures[stream].add(data);
        emit({ type: "output", step: name, stream, data });
      });
      redactors.push(redactor);
      return redactor;
    };
    const streams = { stdout: redactorFor("stdout"), stderr: redactorFor("stderr") };
    return (stream: "stdout" | "stderr", data: Uint8Array) => streams[stream].write(data);
  };

  emit({ type: "start", id, startedAt, trigger: options.trigger, repoPath: config.repoPath });
  for (const notice of options.notices ?? []) step("config", notice);
  const pullOut = { stdout: new Capture(), stderr: new Capture() };
  const runOut = { stdout: new Capture(), stderr: new Capture() };
  let error: string | null = null;
  let pullSuccess = false;
  let before: string | null = null;
  let after: string | null = null;
  let run: Omit<RunResult, "stdout" | "stderr"> = { exitCode: null, timedOut: false, script: config.runScript };
  let rollback: RollbackResult | undefined;
  const context: Record<string, string> = { SERVICE_DEPLOY_ID: id, SERVICE_TRIGGER: options.trigger, SERVICE_REPO_PATH: config.repoPath };
  if (options.app) context.SERVICE_APP = options.app;
  const childEnv = scriptEnv(env, context);

  try {
    // Pull.
    const repo = existsSync(config.repoPath) ? await inspectRepo(config.repoPath, childEnv) : undefined;
    if (!repo) {
      error = `repoPath ${config.repoPath} does not exist`;
      step("pull", `failed: ${error}`);
    } else if (!repo.workTree) {
      error = `repoPath ${config.repoPath} is not a git repository`;
      step("pull", `failed: ${error}`);
    } else {
      before = repo.head;
      childEnv.SERVICE_COMMIT_BEFORE = before ?? "";
      if (!repo.hasRemote) {
        pullSuccess = true;
        step("pull", "no remote configured; nothing to pull");
      } else {
        step("pull", "git pull");
        const pulled = await gitPull(config.repoPath, { env: childEnv, deadline: Date.now() + config.runTimeoutMs, onOutput: output("pull", pullOut) });
        pullSuccess = pulled.exitCode === 0;
        if (!pullSuccess) {
          error = pulled.error ?? (pulled.timedOut ? "git pull timed out" : `git pull failed with exit code ${pulled.exitCode}`);
          step("pull", `failed: ${error}`);
        }
      }
      after = repo.hasRemote ? await headCommit(config.repoPath, childEnv) : before;
      childEnv.SERVICE_COMMIT = after ?? "";
      if (pullSuccess) step("pull", before === after ? `up to date at ${short(after)}` : `${short(before)} -> ${short(after)}`);
    }

    // Post-pull reload (rule 4), then the run script.
    reloadFromRepo(config, options.cwd, env, step, options.app);
    run = await runStep(config, childEnv, "run", output("run", runOut), step);
    if (run.exitCode !== 0 && !error) error = describeFailure(run);

    // Rollback (rules 2-3).
    if (run.exitCode !== 0 && config.rollbackOnFailure) {
      rollback = await rollBack(config, before, after, childEnv, options.cwd, env, step, output, options.app);
    }
  } catch (caught) {
    error = `internal error: ${(caught as Error).message}`;
    step("deploy", error);
  }

  const finishedAt = new Date();
  const ok = rollback ? rollback.ok : pullSuccess && run.exitCode === 0 && error === null;
  if (error) error = redaction.text(error);
  if (rollback?.error) rollback.error = redaction.text(rollback.error);
  const result: DeployResult = {
    id,
    ok,
    pull: { success: pullSuccess, stdout: pullOut.stdout.toString(), stderr: pullOut.stderr.toString(), before, after },
    run: { ...run, script: redaction.text(run.script), stdout: runOut.stdout.toString(), stderr: runOut.stderr.toString() },
    error,
    ...(rollback ? { rollback } : {}),
    log: { id, json: log.jsonPath, log: log.logPath },
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationMs: finishedAt.getTime() - startedAt.getTime(),
  };
  emit({ type: "done", result });
  log.finish(result);
  prune(options);
  return result;
}

/** Retention after each deploy; a failure to prune never fails the deploy. */
export function prune(options: DeployOptions): void {
  try {
    pruneLogs(options.cwd, options.config.keepDeploys, options.config.keepDays, Date.now(), options.app);
  } catch {}
}

const short = (commit: string | null) => (commit ? commit.slice(0, 12) : "(no commit)");

function describeFailure(run: Omit<RunResult, "stdout" | "stderr"> & { error?: string }): string | null {
  if (run.error) return run.error;
  if (run.timedOut) return `run script timed out`;
  return null;
}

type Emitter = (step: Step, text: string) => void;
type OutputFor = (name: Step, captures: { stdout: Capture; stderr: Capture }) => (stream: "stdout" | "stderr", data: Uint8Array) => void;

/**
 * Rule 4: after the pull, the repository's config file (if any) decides runScript and runTimeoutMs. For a single
 * app, its top-level keys apply and SERVICE_* variables still win. For an app of multi-app mode, its own entry in
 * that file's `apps` applies when there is one, else the file's top-level keys (a repository written for one
 * app); the environment sets the top level only, so it does not override an app.
 */
function reloadFromRepo(config: DeploySettings, cwd: string, env: NodeJS.ProcessEnv, step: Emitter, app?: string): void {
  const file = repoConfigFile(config.repoPath, cwd, env);
  if (!file) return;
  let fromEnv: ReturnType<typeof envConfig> = {};
  try {
    if (!app) fromEnv = envConfig(env);
  } catch {}
  try {
    const loaded = readConfigFile(file);
    if (loaded.invalid || !loaded.config) {
      step("config", `${loaded.invalid}; keeping the current run script and timeout`);
      return;
    }
    const fileApps = loaded.config.apps ?? [];
    const source = app && fileApps.length > 0 ? fileApps.find((entry) => entry.name === app) : loaded.config;
    if (!source) return;
    config.runScript = fromEnv.runScript ?? source.runScript ?? config.runScript;
    config.runTimeoutMs = fromEnv.runTimeoutMs ?? source.runTimeoutMs ?? config.runTimeoutMs;
    step("config", `loaded ${file}`);
  } catch (caught) {
    step("config", `${(caught as Error).message}; keeping the current run script and timeout`);
  }
}

async function runStep(
  config: DeploySettings,
  env: Record<string, string | undefined>,
  name: Step,
  onOutput: (stream: "stdout" | "stderr", data: Uint8Array) => void,
  step: Emitter,
): Promise<Omit<RunResult, "stdout" | "stderr"> & { error?: string }> {
  const started = Date.now();
  const outcome = await runScript(config.runScript, {
    cwd: config.repoPath,
    env,
    timeoutMs: config.runTimeoutMs,
    onOutput,
    onLine: (line) => step(name, `$ ${line}`),
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (outcome.error) step(name, outcome.error);
  else if (outcome.timedOut) step(name, `timed out after ${config.runTimeoutMs} ms (runTimeoutMs); killed the script and its child processes`);
  else step(name, `exit code ${outcome.exitCode} after ${seconds} s`);
  return { exitCode: outcome.exitCode, timedOut: outcome.timedOut, script: config.runScript, ...(outcome.error ? { error: outcome.error } : {}) };
}

async function rollBack(
  config: DeploySettings,
  before: string | null,
  after: string | null,
  env: Record<string, string | undefined>,
  cwd: string,
  processEnv: NodeJS.ProcessEnv,
  step: Emitter,
  output: OutputFor,
  app?: string,
): Promise<RollbackResult | undefined> {
  if (!before) {
    step("rollback", "skipped: there is no commit from before the pull to return to");
    return undefined;
  }
  const out = { stdout: new Capture(), stderr: new Capture() };
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
  const reset = await gitResetHard(config.repoPath, before, { env, deadline: Date.now() + 60_000, onOutput: output("rollback", out) });
  if (reset.exitCode !== 0) {
    const error = reset.error ?? `git reset --hard failed with exit code ${reset.exitCode}`;
    step("rollback", `failed: ${error}`);
    return result({ error });
  }
  reloadFromRepo(config, cwd, processEnv, step, app);
  step("rollback", "running the run script again at the previous commit");
  const run = await runStep(config, env, "rollback", output("rollback", out), step);
  const ok = run.exitCode === 0;
  step("rollback", ok ? "succeeded" : "failed");
  return result({ ok, exitCode: run.exitCode, timedOut: run.timedOut, error: ok ? null : (describeFailure(run) ?? `exit code ${run.exitCode}`) });
}
