/**
 * Freeze windows at the start of a deploy (docs/deploy-control.md "Freeze windows"): a deploy that waited in the
 * queue into a freeze is refused when its turn comes, with nothing run, unless it was asked with force. A rollback
 * (a target without a ref) is never frozen.
 */
import { freezeAt, type Freeze } from "../config/freeze.ts";
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
 * When a deploy leaves a wait (the queue at its start, the gate): why a freeze refuses it now, or null when it goes
 * on (no freeze, a rollback, or asked with force: then a freeze that began meanwhile is said as gone past).
 */
export function frozenNow(options: PlannedDeploy, step: (step: "deploy", text: string) => void): string | null {
  const freeze = freezeOf(options);
  if (!freeze) return null;
  if (options.force) {
    if (!options.forced?.includes(forcedText(freeze))) step("deploy", `forced: ${forcedText(freeze)}`);
    return null;
  }
  const error = frozenText(freeze);
  step("deploy", `not started: ${error}; nothing runs`);
  return error;
}

/** What a starting service says of the freezes in force, one line per app (as `pauseNotices` of the pauses). */
export function freezeNotices(apps: { name?: string; freeze?: DeployOptions["config"]["freeze"] }[]): string[] {
  return apps.flatMap((app) => {
    const freeze = freezeAt(app.freeze, new Date());
    const whose = app.name === undefined ? "deploys" : `deploys of app "${app.name}"`;
    return freeze ? [`${whose} are ${frozenText(freeze)} (--force deploys anyway)`] : [];
  });
}
