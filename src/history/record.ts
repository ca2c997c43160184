/**
 * A deploy's two log files as the README's "Log files" section describes them: where they are, their names,
 * and the JSON record's shape; and what is added to a finished record (late outbound outcomes).
 */
import { closeSync } from "node:fs";
import { join } from "node:path";
import type { DeploymentInfo, DeployPhase, DeployResult, Outcome, Served, Trigger, Unrun } from "../types.ts";
import type { WatchProgress } from "../watch-types.ts";
import { openForAppend, readNoFollow, writeAll, writeFileAtomic } from "../system/files.ts";
import { OWN_START } from "../system/liveness.ts";

/** Log directory, relative to the working directory. */
export const LOG_DIR = join(".service", "logs");

/** A deploy's log file name: date, hour, minute, second (UTC), the deploy id, the extension. */
export const LOG_FILE_NAME = /^(\d{4}-\d{2}-\d{2})_(\d{2})-(\d{2})-(\d{2})Z_([0-9a-f-]{36})\.(json|log)$/;

/** `YYYY-MM-DD_HH-mm-ssZ_<id>`: the UTC start time then the deploy id, so names sort by time. */
export function logStem(startedAt: Date, id: string): string {
  const iso = startedAt.toISOString(); // 2026-11-22T15:05:21.123Z
  return `${iso.slice(0, 10)}_${iso.slice(11, 19).replaceAll(":", "-")}Z_${id}`;
}

export interface DeployRecordHeader {
  id: string;
  /** The app deployed (multi-app mode). */
  app?: string;
  startedAt: Date;
  trigger: Trigger;
  /** Who started it (docs/log-files.md "Who deployed what"). */
  actor?: string | null;
  /** A person signed in with an OpenID provider: the provider's subject. */
  sub?: string;
  /** A deploy of a ref (`service deploy --ref`, the API's `ref`): the ref as it was named. */
  ref?: string;
  /** It was asked to run while deploys were paused, and did. */
  forced?: boolean;
  /** The commit the forge's delivery said was pushed (checked after the pull). */
  pushed?: string;
  /** With `paths`: the changed files that matched them (the first 20). */
  paths?: PathsRecord;
  /** A GitHub deployment event's deployment. */
  deployment?: DeploymentInfo;
  /** The forge event and delivery id of a webhook deploy. */
  event?: string | null;
  delivery?: string | null;
  repoPath: string;
  runScript: string;
  /** With `queuePolicy: latest`: the requests this one deploy served (see latest.ts). */
  served?: Served;
}

/**
 * With `paths`: the changed files that matched them (the first 20), or `forced` for a deploy an operator asked for
 * (`service deploy`, `--ref`, the API, a rollback), which deploys whatever the paths say.
 */
export type PathsRecord = { matched: string[] } | { forced: true };

/** The JSON log file: "running" while the deploy runs, the whole result once it is done. */
export interface DeployRecord {
  /** `refused` and `superseded`: acknowledged, never ran its script (docs/deploy-control.md "Requests"). */
  status: "running" | "done" | "interrupted" | "cancelled" | Unrun;
  /** A refused or superseded request: why, in words (`gate: ci/build failure`). */
  reason?: string;
  id: string;
  app?: string;
  trigger: Trigger;
  /** Who started it: a forge's pusher, `webhook@<address>`, `cli:<user>`, `admin@<address>`, `poll`; null in old records. */
  actor?: string | null;
  /** A person signed in with an OpenID provider: the provider's subject. */
  sub?: string;
  ref?: string;
  forced?: boolean;
  pushed?: string;
  paths?: PathsRecord;
  deployment?: DeploymentInfo;
  /** While it runs: what it waits for (`checks`: at a gate, docs/configuration.md "gate"). */
  waiting?: string;
  /** While it watches (docs/watch.md): the watch's progress. */
  watching?: WatchProgress;
  /** While it runs: the phases that ended so far (the final ones are the result's). */
  phases?: DeployPhase[];
  /** A cancelled deploy: who cancelled it, and when. */
  cancel?: { by: string | null; at: string };
  /** The forge event and delivery id (`X-GitHub-Event`, …); null when the request carried none, or from the CLI. */
  event: string | null;
  delivery: string | null;
  repoPath: string;
  runScript: string;
  startedAt: string;
  pid: number;
  /** The start time of `pid` (see liveness.ts), so a reused pid is not mistaken for the deploy's process. */
  pidStart?: string;
  finishedAt?: string;
  durationMs?: number;
  result?: DeployResult | DoneLineOnly;
  /** Set when the record could not hold everything (a full disk): what is missing and why. */
  note?: string;
  served?: Served;
  /** Outcomes of the outbound calls (commit statuses, notifications), in the order they ended. */
  outbound?: OutboundEntry[];
}

/** One outbound call's outcome as the record keeps it. */
export interface OutboundEntry {
  kind: "status" | "notify";
  /** The provider or the format (`github`, `slack`…); never a URL, which may hold a secret. */
  target: string;
  /** The commit state posted, or the notified event. */
  what: string;
  ok: boolean;
  detail: string;
  at: string;
}

/** What a repaired record knows of a deploy whose final record was lost: its `[done]` line, no more. */
export interface DoneLineOnly {
  ok: boolean;
  run: { exitCode: number | null };
  rolledBack?: boolean;
}

/**
 * Adds outbound outcomes to a deploy whose record is finished: their lines to the end of the `.log`, the
 * entries to the record's `outbound`. Files that are gone (pruned) stay gone, links are never followed, and
 * nothing here throws.
 */
export function appendOutbound(jsonPath: string, logPath: string, lines: string[], outcomes: OutboundEntry[]): void {
  if (lines.length > 0) {
    try {
      // No O_CREAT: a pruned deploy does not come back as a log of a few lines.
      const fd = openForAppend(logPath);
      try {
        writeAll(fd, Buffer.from(lines.map((line) => `${line}\n`).join("")));
      } finally {
        closeSync(fd);
      }
    } catch {}
  }
  try {
    const record = JSON.parse(readNoFollow(jsonPath)) as DeployRecord;
    record.outbound = [...(record.outbound ?? []), ...outcomes];
    writeFileAtomic(jsonPath, `${JSON.stringify(record, null, 2)}\n`);
  } catch {}
}

/**
 * Changes a final record after the deploy's end (what ran after its `[done]` line, as pruning old releases):
 * replaced atomically, never through a link; a record that is gone (pruned) stays gone.
 */
export function amendRecord(jsonPath: string, change: (record: DeployRecord) => void): void {
  try {
    const record = JSON.parse(readNoFollow(jsonPath)) as DeployRecord;
    change(record);
    writeFileAtomic(jsonPath, `${JSON.stringify(record, null, 2)}\n`);
  } catch {}
}

/** How a deploy that ended counts, for the metrics, the API and notifications: a rollback is not a success. */
export function outcomeOf(result: Pick<DeployResult, "ok" | "rolledBack">, cancelled = false, unrun?: Unrun): Outcome {
  if (unrun) return unrun;
  if (cancelled) return "cancelled";
  if (result.rolledBack) return "rolled_back";
  return result.ok ? "ok" : "failed";
}

/** The record of a deploy as its header makes it, with `extra` (the running record's fields, or the end's). */
export function recordOf(header: DeployRecordHeader, extra: Partial<DeployRecord>): DeployRecord {
  return {
    status: "running",
    id: header.id,
    ...(header.app ? { app: header.app } : {}),
    trigger: header.trigger,
    actor: header.actor ?? null,
    ...(header.sub ? { sub: header.sub } : {}),
    ...(header.ref !== undefined ? { ref: header.ref } : {}),
    ...(header.forced ? { forced: true } : {}),
    ...(header.pushed ? { pushed: header.pushed } : {}),
    ...(header.paths ? { paths: header.paths } : {}),
    ...(header.deployment ? { deployment: header.deployment } : {}),
    event: header.event ?? null,
    delivery: header.delivery ?? null,
    repoPath: header.repoPath,
    runScript: header.runScript,
    ...(header.served ? { served: header.served } : {}),
    startedAt: header.startedAt.toISOString(),
    pid: process.pid,
    pidStart: OWN_START,
    ...extra,
  };
}
