/**
 * Freeze windows at the start of a deploy (docs/deploy-control.md "Freeze windows"): a deploy that waited in the
 * queue into a freeze is refused when its turn comes, with nothing run, unless it was asked with force. A rollback
 * (a target without a ref) is never frozen.
 */
import { freezeAt, type Freeze } from "../config/freeze.ts";
import type { DeployResult } from "../types.ts";
import type { DeployRun } from "./run.ts";
import type { DeployOptions, PlannedDeploy } from "./types.ts";

/** A rollback puts back what was live: never frozen. */
export const isRollback = (options: Pick<DeployOptions, "target">) =>
  options.target !== undefined && options.target.ref === undefined;

/** The freeze that holds a deploy of `options` now: none for a rollback. */
export function freezeOf(options: Pick<DeployOptions, "target" | "config">, now = new Date()): Freeze | undefined {
  return isRollback(options) ? undefined : freezeAt(options.config.freeze, now);
}

/** `frozen until Mon 08:00 Europe/Berlin: weekend`: how every refusal says it. */
export const frozenText = (freeze: Freeze) => `frozen until ${freeze.until}: ${freeze.reason}`;

/** What the record's `forced` line says of a freeze gone past. */
export const forcedText = (freeze: Freeze) => `deploys are frozen: ${freeze.reason} (until ${freeze.until})`;

/**
 * At the start of a deploy: its ending when a freeze holds it (`[done] ok=false`, nothing run), or undefined when
 * it goes on (no freeze, a rollback, or asked with force: then its `forced` line says so).
 */
export function frozenRefusal(options: PlannedDeploy, run: DeployRun): DeployResult | undefined {
  const freeze = freezeOf(options);
  if (!freeze) return undefined;
  if (options.force) {
    run.step("deploy", `forced: ${forcedText(freeze)}`);
    return undefined;
  }
  const error = frozenText(freeze);
  run.step("deploy", `not started: ${error}`);
  return run.end(
    {
      ok: false,
      pull: { success: false, stdout: "", stderr: "", before: null, after: null },
      run: { stdout: "", stderr: "", exitCode: null, timedOut: false, script: options.config.runScript },
      error,
      rolledBack: false,
      commit: null,
      previousCommit: null,
    },
    "done",
    run.startedAt,
  );
}
