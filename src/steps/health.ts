import { setTimeout as sleep } from "node:timers/promises";
import { defaultConfig } from "../config/schema-resolved.ts";
import type { HealthCheckResult, Step } from "../types.ts";
import { deployInterrupted, type Leftovers, type ScriptLimits } from "../system/process.ts";
import { describeLeftovers, runScript } from "./script.ts";
import type { HealthSettings } from "./context.ts";

const DEFAULTS = defaultConfig();

/**
 * The longest one GET may take: the URL is the user's own app, usually on localhost, and a request that
 * hangs must not use up the whole check (the next attempt may succeed).
 */
export const HEALTH_REQUEST_LIMIT_MS = 10_000;

export interface HealthCheckOptions {
  /** Where the command runs (repoPath). */
  cwd: string;
  /** The deploy's environment (the run script's). */
  env: Record<string, string | undefined>;
  /** A `[health]` line of the stream. */
  say: (text: string) => void;
  /** The deploy's `limits`: a command health check runs under them. */
  limits?: ScriptLimits;
}

/** Whether the settings ask for a health check at all (neither key: today's behaviour, no check). */
export const hasHealthCheck = (settings: HealthSettings) => Boolean(settings.healthCheckUrl || settings.healthCheck);

/**
 * The health check after a successful run script: the command (exit 0) and the URL (any 2xx), tried every
 * `healthCheckIntervalMs` until both are healthy or `healthCheckTimeoutMs` ran out. Never throws. Only the
 * first attempt, each change of what was seen, and the last are said, so a long wait stays a few lines.
 */
export async function runHealthCheck(given: HealthSettings, options: HealthCheckOptions): Promise<HealthCheckResult> {
  const settings = {
    ...given,
    healthCheckTimeoutMs: given.healthCheckTimeoutMs ?? DEFAULTS.healthCheckTimeoutMs,
    healthCheckIntervalMs: given.healthCheckIntervalMs ?? DEFAULTS.healthCheckIntervalMs,
  };
  const started = Date.now();
  const deadline = started + settings.healthCheckTimeoutMs;
  const what = [
    settings.healthCheck && `\`${settings.healthCheck}\``,
    settings.healthCheckUrl && `GET ${settings.healthCheckUrl}`,
  ]
    .filter(Boolean)
    .join(" and ");
  options.say(
    `checking ${what} every ${settings.healthCheckIntervalMs} ms, for at most ${settings.healthCheckTimeoutMs} ms`,
  );
  // Ctrl-C or a forced stop ends the check as it ends the commands: it must not wait out its timeout.
  const interrupted = deployInterrupted();
  let attempts = 0;
  let last: string | undefined;
  /** The last problem of an attempt that was not cut short by the deadline: what the app really answered. */
  let lastAnswer: string | undefined;
  let longest = 0;
  const leftovers = new LeftoverLines(options.say);
  const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
  for (;;) {
    attempts++;
    const began = Date.now();
    const tried: Tried = interrupted.aborted
      ? { problem: STOPPED }
      : await attempt(settings, options, deadline, interrupted, attempts);
    longest = Math.max(longest, Date.now() - began);
    if (tried.left) leftovers.report(attempts, tried.left);
    const problem = tried.problem;
    const elapsed = Date.now() - started;
    if (problem === undefined) {
      leftovers.end(attempts);
      options.say(`healthy after ${attempts} attempt${attempts === 1 ? "" : "s"} in ${seconds()} s`);
      return { ok: true, attempts, durationMs: elapsed, error: null };
    }
    if (problem !== last) options.say(`attempt ${attempts}: unhealthy (${problem})`);
    last = problem;
    if (!tried.cut) lastAnswer = problem;
    const wait = Math.min(settings.healthCheckIntervalMs, deadline - Date.now());
    // An attempt started with less time than attempts take would only be cut, and hide the real answer.
    const tooLate = deadline - (Date.now() + wait) < Math.max(MIN_ATTEMPT_MS, longest);
    if (wait <= 0 || tooLate || interrupted.aborted) {
      const why = interrupted.aborted
        ? "stopped"
        : `still unhealthy within ${settings.healthCheckTimeoutMs} ms (healthCheckTimeoutMs)`;
      const reason =
        tried.cut && lastAnswer !== undefined
          ? `${problem} (cut at the timeout); the last answer: ${lastAnswer}`
          : problem;
      const error = `health check failed: ${why}, ${attempts} attempt${attempts === 1 ? "" : "s"}; last: ${reason}`;
      leftovers.end(attempts);
      options.say(`failed after ${attempts} attempt${attempts === 1 ? "" : "s"} in ${seconds()} s: ${reason}`);
      return { ok: false, attempts, durationMs: Date.now() - started, error };
    }
    await sleep(wait, undefined, { signal: interrupted }).catch(() => {});
  }
}

/** One attempt: undefined when healthy, else what was wrong. */
const STOPPED = "the deploy was stopped";

/** The number of the attempt, in the check command's environment. */
export const ATTEMPT_ENV = "SERVICE_HEALTH_CHECK_ATTEMPT";

/** An attempt is not started with less time left than this (nor than the longest attempt so far took). */
export const MIN_ATTEMPT_MS = 100;

/**
 * How one attempt went: `problem` undefined when healthy; `cut` when the deadline, not the app, ended it;
 * `left`, what the command had left running.
 */
interface Tried {
  problem?: string;
  cut?: boolean;
  left?: Leftovers;
}

/**
 * The `[health]` lines about what the check's command left running: said the first time and whenever it
 * changes (a check retried for a minute stays a few lines), and counted at the end.
 */
class LeftoverLines {
  private shape: string | undefined;
  private count = 0;
  private allStopped = true;

  constructor(private readonly print: (text: string) => void) {}

  report(attempt: number, left: Leftovers): void {
    this.count++;
    this.allStopped &&= left.stopped;
    const verb = left.stopped ? "stopped" : "could not stop all of";
    const shape = `${verb} ${[...left.members, ...left.outside].map((p) => p.command).join()}`;
    if (shape !== this.shape)
      this.print(`attempt ${attempt}: ${verb} what the check left running: ${describeLeftovers(left)}`);
    this.shape = shape;
  }

  end(attempts: number): void {
    if (this.count > 1)
      this.print(
        `the check left processes running after ${this.count} of ${attempts} attempts; ${this.allStopped ? "all were stopped" : "not all could be stopped"}`,
      );
  }
}

async function attempt(
  settings: HealthSettings & { healthCheckTimeoutMs: number },
  options: HealthCheckOptions,
  deadline: number,
  interrupted: AbortSignal,
  number: number,
): Promise<Tried> {
  let left: { left?: Leftovers } = {};
  if (settings.healthCheck) {
    // Each attempt is marked in its environment, so what it starts outside its process group (setsid, a
    // daemon) is told apart from what the run script left running on purpose, and stopped with the rest.
    const marker = `${ATTEMPT_ENV}=${number}`;
    const id = options.env.SERVICE_DEPLOY_ID;
    // Output is not kept: a check retried for a minute would fill the log with it; the exit code says enough.
    const ran = await runScript(settings.healthCheck, {
      cwd: options.cwd,
      env: { ...options.env, [ATTEMPT_ENV]: String(number) },
      timeoutMs: Math.max(1, deadline - Date.now()),
      onOutput: () => {},
      leaveNothing: id ? [`SERVICE_DEPLOY_ID=${id}`, marker] : [marker],
      ...(options.limits ? { limits: options.limits } : {}),
    });
    if (ran.left) left = { left: ran.left };
    if (ran.error) return { problem: ran.error, ...left };
    // The command's only limit is the check's deadline: a timeout is always a cut.
    if (ran.timedOut) return { problem: "the command timed out", cut: true, ...left };
    if (ran.exitCode !== 0) return { problem: `exit code ${ran.exitCode}`, ...left };
  }
  if (!settings.healthCheckUrl) return left;
  const limitMs = Math.max(1, Math.min(HEALTH_REQUEST_LIMIT_MS, deadline - Date.now()));
  const answer = await get(settings.healthCheckUrl, limitMs, interrupted);
  const cut = answer?.timedOut === true && limitMs < HEALTH_REQUEST_LIMIT_MS;
  return { problem: answer?.problem, cut, ...left };
}

/** One GET: undefined when healthy, else the problem and whether it was `limitMs` that ended it. */
async function get(
  url: string,
  limitMs: number,
  interrupted: AbortSignal,
): Promise<{ problem: string; timedOut?: boolean } | undefined> {
  try {
    // A redirect is an answer, not health: a login page behind a 302 must not pass for the app being up.
    const response = await fetch(url, {
      redirect: "manual",
      signal: AbortSignal.any([AbortSignal.timeout(limitMs), interrupted]),
    });
    await response.body?.cancel().catch(() => {});
    return response.status >= 200 && response.status < 300 ? undefined : { problem: `HTTP ${response.status}` };
  } catch (error) {
    const err = error as Error & { code?: string };
    if (interrupted.aborted) return { problem: STOPPED };
    if (err.name === "TimeoutError" || err.name === "AbortError")
      return { problem: `no answer within ${limitMs} ms`, timedOut: true };
    return { problem: err.code ? `${err.code}` : err.message };
  }
}

/**
 * The health stage of a deploy (and of its rollback's redeploy): undefined when no check is configured. The
 * command runs in repoPath, or in `cwd` (with releases: `<path>/current`).
 */
export async function healthStep(
  ctx: {
    config: HealthSettings & { repoPath: string };
    env: Record<string, string | undefined>;
    run: { step: (name: Step, text: string) => void };
    limits?: ScriptLimits;
  },
  cwd = ctx.config.repoPath,
): Promise<HealthCheckResult | undefined> {
  if (!hasHealthCheck(ctx.config)) return undefined;
  return runHealthCheck(ctx.config, {
    cwd,
    env: ctx.env,
    say: (text) => ctx.run.step("health", text),
    ...(ctx.limits ? { limits: ctx.limits } : {}),
  });
}
