/**
 * A running deploy's watch as `service status` and `GET /api/apps` show it (docs/watch.md): read from its running
 * record, which the watch updates at each check, with the time so far.
 */
import type { DeployResult } from "../types.ts";
import { readDeployRecord } from "./entry.ts";
import type { DeployRecord } from "./record.ts";

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

/**
 * A deploy found watching at start, its process gone (a crash, a kill): what it deployed went live and was healthy,
 * so it is recorded as a stop during the watch is (docs/watch.md): ok, its watch interrupted. Undefined for a deploy
 * that was not watching.
 */
export function watchInterrupted(
  record: DeployRecord,
  log: { json: string; log: string },
  now = Date.now(),
): Pick<DeployRecord, "status" | "result"> | undefined {
  const watching = record.status === "running" ? record.watching : undefined;
  if (!watching || typeof watching.startedAt !== "string") return undefined;
  const commit = (sha: string | null) => (sha ? { sha, subject: "", author: "", date: "" } : null);
  const finishedAt = new Date(now).toISOString();
  const { query, command, lastValue, threshold, checks, forMs, startedAt } = watching;
  const result: DeployResult = {
    id: record.id,
    ok: true,
    pull: { success: true, stdout: "", stderr: "", before: watching.previousCommit, after: watching.commit },
    run: { stdout: "", stderr: "", exitCode: 0, timedOut: false, script: record.runScript },
    error: null,
    rolledBack: false,
    actor: record.actor ?? null,
    commit: commit(watching.commit),
    previousCommit: commit(watching.previousCommit),
    watch: {
      ...(query !== undefined ? { query } : {}),
      ...(command !== undefined ? { command } : {}),
      value: lastValue,
      threshold,
      at: Math.max(0, Math.min(forMs, now - Date.parse(startedAt))),
      checks,
      interrupted: true,
    },
    log: { id: record.id, ...log },
    startedAt: record.startedAt,
    finishedAt,
    durationMs: Math.max(0, now - Date.parse(record.startedAt)),
    ...(record.phases ? { phases: record.phases } : {}),
  };
  return { status: "done", result };
}
