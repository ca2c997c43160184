import type { ResolvedApp } from "../config/apps.ts";
import { hasHealthCheck, HEALTH_REQUEST_LIMIT_MS } from "../steps/health.ts";
import type { HealthSettings } from "../steps/context.ts";
import { MIN_COMMAND_MS, resolveWatch } from "../config/watch.ts";

/** A failed run's `git reset --hard` before the rollback run (its own deadline in the pipeline). */
const RESET_SECONDS = 60;
/** Killing a timed-out step's process tree (TERM, then KILL after a grace) and writing the last log lines. */
const MARGIN_SECONDS = 60;

/**
 * The longest one deploy can take, in whole seconds, for the app that can take longest: `git pull` and the run
 * script each get runTimeoutMs; with rollbackOnFailure a failed run is followed by the reset and the run script
 * once more. Everything that must outlast a deploy comes from this one rule: systemd's TimeoutStopSec (a stopped
 * service finishes its running deploy) and nginx's proxy_read_timeout / proxy_send_timeout (the proxy never cuts
 * a deploy's stream). With the defaults (runTimeoutMs 1800000, no rollback): 2 × 1800 + 60 = 3660. A health
 * check adds its timeout (and its last attempt's) after each run of the script. A `watch` adds `forMs` and one
 * interval (a check's own bound: at least 10 s), and with `onBreach: rollback` the rollback it may run.
 */
export function deployLimitSeconds(
  apps: (Pick<ResolvedApp, "runTimeoutMs" | "rollbackOnFailure" | "watch"> & HealthSettings)[],
): number {
  const limits = apps.map((app) => {
    const step = Math.ceil(app.runTimeoutMs / 1000);
    const health = hasHealthCheck(app)
      ? Math.ceil(((app.healthCheckTimeoutMs ?? 60_000) + HEALTH_REQUEST_LIMIT_MS) / 1000)
      : 0;
    const watch = app.watch && resolveWatch(app.watch);
    const watching = watch ? Math.ceil((watch.forMs + Math.max(watch.intervalMs, MIN_COMMAND_MS)) / 1000) : 0;
    // A breach rolls back (onBreach: rollback) even without rollbackOnFailure.
    const rollsBack = app.rollbackOnFailure || watch?.onBreach === "rollback";
    return rollsBack
      ? 3 * step + 2 * health + watching + RESET_SECONDS + MARGIN_SECONDS
      : 2 * step + health + watching + MARGIN_SECONDS;
  });
  return Math.max(...limits);
}
