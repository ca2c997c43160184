/**
 * A running deploy's watch as `service status` and `GET /api/apps` show it (docs/watch.md): read from its running
 * record, which the watch updates at each check, with the time so far.
 */
import { readDeployRecord } from "./entry.ts";

/** What an app that is watching shows. */
export interface Watching {
  deployId: string;
  commit: string | null;
  startedAt: string;
  forMs: number;
  elapsedMs: number;
  checks: number;
  /** Failed checks in a row now. */
  failures: number;
  lastValue: number | null;
}

/** The watch of the running deploy `entry`, or null when it does not watch. */
export function watchingOf(entry: { id: string; jsonPath: string } | undefined, now = Date.now()): Watching | null {
  if (!entry) return null;
  const record = readDeployRecord(entry.jsonPath);
  const watching = record?.status === "running" ? record.watching : undefined;
  if (!watching || typeof watching.startedAt !== "string") return null;
  const { startedAt, forMs, commit, checks, failures, lastValue } = watching;
  return {
    deployId: entry.id,
    commit,
    startedAt,
    forMs,
    elapsedMs: Math.max(0, Math.min(forMs, now - Date.parse(startedAt))),
    checks,
    failures,
    lastValue,
  };
}

/** "watching (2 of 5 min)". */
export function watchingLabel(watching: Pick<Watching, "elapsedMs" | "forMs">): string {
  const inMinutes = watching.forMs >= 120_000;
  const unit = inMinutes ? 60_000 : 1000;
  const shown = (ms: number) => {
    const n = ms / unit;
    return Number.isInteger(n) ? String(n) : n.toFixed(1);
  };
  return `watching (${shown(watching.elapsedMs)} of ${shown(watching.forMs)} ${inMinutes ? "min" : "s"})`;
}
