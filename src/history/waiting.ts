import { readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Trigger } from "../types.ts";
import { ensurePrivateDir, readNoFollow, writeFileAtomic } from "../system/files.ts";
import { processAlive, OWN_START } from "../system/liveness.ts";

/**
 * Deploys that were acknowledged (their id given out) but wait in the queue: a deploy's log files appear only
 * when it starts, so without this `service logs <id>` could not tell a waiting deploy from an unknown id. One
 * small record per waiting deploy, next to the log directory rather than in it, so the log directory keeps
 * exactly two files per deploy for listings and retention.
 */
export const QUEUED_DIR = join(".service", "queued");

export interface QueuedRecord {
  status: "queued";
  id: string;
  app?: string;
  trigger: Trigger;
  /** Who asked for it (docs/log-files.md "Who deployed what"). */
  actor?: string | null;
  repoPath: string;
  queuedAt: string;
  /** The service process that holds the deploy in its queue, and its start time (see liveness.ts). */
  pid: number;
  pidStart: string;
}

const FILE = /^([0-9a-f-]{36})\.json$/;

function read(file: string): QueuedRecord | undefined {
  try {
    const record = JSON.parse(readNoFollow(file)) as QueuedRecord;
    return record && record.status === "queued" && typeof record.id === "string" && typeof record.pid === "number"
      ? record
      : undefined;
  } catch {
    return undefined;
  }
}

function records(cwd: string): { file: string; record: QueuedRecord }[] {
  const dir = resolve(cwd, QUEUED_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    if (!FILE.test(name)) return [];
    const record = read(join(dir, name));
    return record ? [{ file: join(dir, name), record }] : [];
  });
}

/** Whether the service that queued the deploy still runs: if not, the deploy will never start. */
export const holderRunning = (record: QueuedRecord) => processAlive(record.pid, record.pidStart);

/**
 * Records a deploy as waiting. Never throws: the record only informs readers, and the deploy goes on without it.
 * Records left by a service that was killed are removed here, so they do not pile up.
 */
export function markQueued(cwd: string, fields: Omit<QueuedRecord, "status" | "queuedAt" | "pid" | "pidStart">): void {
  try {
    for (const { file, record } of records(cwd)) if (!holderRunning(record)) rmSync(file, { force: true });
    const dir = resolve(cwd, QUEUED_DIR);
    ensurePrivateDir(dir);
    const record: QueuedRecord = {
      status: "queued",
      ...fields,
      queuedAt: new Date().toISOString(),
      pid: process.pid,
      pidStart: OWN_START,
    };
    const file = join(dir, `${fields.id}.json`);
    writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`);
  } catch {}
}

/** The deploy started (its log files exist now) or was cancelled: it no longer waits. */
export function unmarkQueued(cwd: string, id: string): void {
  try {
    rmSync(resolve(cwd, QUEUED_DIR, `${id}.json`), { force: true });
  } catch {}
}

/** The waiting deploys whose id starts with `prefix`. */
export function queuedDeploys(cwd: string, prefix: string): QueuedRecord[] {
  const needle = prefix.toLowerCase();
  return records(cwd)
    .map(({ record }) => record)
    .filter((record) => record.id.startsWith(needle));
}
