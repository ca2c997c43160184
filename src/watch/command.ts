/**
 * One check of a watch's `command`: run with the deploy's environment, its output in the deploy's log under
 * `[watch]`, exit 0 passes. Its value is the exit code; a command that cannot start or runs out of time is a check
 * that failed with its reason.
 */
import { MIN_COMMAND_MS } from "../config/watch.ts";
import { captures } from "../steps/capture.ts";
import type { DeployContext } from "../steps/context.ts";
import { runScript } from "../steps/script.ts";
import type { Reading } from "./prometheus.ts";

/** The environment variable that tells a check command which check it is. */
export const WATCH_CHECK_ENV = "SERVICE_WATCH_CHECK";

let checkNumber = 0;

/** Runs `command` once in `cwd`: its exit code, or why it has none. */
export async function commandCheck(
  ctx: DeployContext,
  command: string,
  cwd: string,
  intervalMs: number,
): Promise<Reading> {
  const timeoutMs = Math.max(intervalMs, MIN_COMMAND_MS);
  const ran = await runScript(command, {
    cwd,
    env: { ...ctx.env, [WATCH_CHECK_ENV]: String(++checkNumber) },
    timeoutMs,
    onOutput: ctx.run.output("watch", captures()),
    ...(ctx.limits ? { limits: ctx.limits } : {}),
  });
  if (ran.error) return { problem: ran.error };
  if (ran.timedOut) return { problem: `the command ran past ${timeoutMs} ms` };
  if (ran.exitCode === null) return { problem: "the command was stopped" };
  return { value: ran.exitCode };
}
