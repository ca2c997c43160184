import { closeSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import { Transcript, type DeployEvent, type DeployResult, type Trigger } from "./events.ts";

/** Log directory, relative to the working directory. */
export const LOG_DIR = join(".service", "logs");

/** `YYYY-MM-DD_HH-mm-ssZ_<id>`: the UTC start time then the deploy id, so names sort by time. */
export function logStem(startedAt: Date, id: string): string {
  const iso = startedAt.toISOString(); // 2026-11-22T15:05:21.123Z
  return `${iso.slice(0, 10)}_${iso.slice(11, 19).replaceAll(":", "-")}Z_${id}`;
}

export interface DeployRecordHeader {
  id: string;
  startedAt: Date;
  trigger: Trigger;
  repoPath: string;
  runScript: string;
}

/** The JSON log file: "running" while the deploy runs, the whole result once it is done. */
export interface DeployRecord {
  status: "running" | "done" | "interrupted" | "cancelled";
  id: string;
  trigger: Trigger;
  repoPath: string;
  runScript: string;
  startedAt: string;
  pid: number;
  finishedAt?: string;
  durationMs?: number;
  result?: DeployResult;
}

/**
 * Writes one deploy's two files: every event to the human `.log` as it happens, and the `.json` record at the
 * start and at the end (atomically, so a reader never sees half a file).
 */
export class DeployLog {
  readonly jsonPath: string;
  readonly logPath: string;
  private readonly fd: number;
  private readonly transcript = new Transcript();
  private failed = false;

  constructor(
    cwd: string,
    private readonly header: DeployRecordHeader,
  ) {
    const dir = resolve(cwd, LOG_DIR);
    mkdirSync(dir, { recursive: true });
    const stem = logStem(header.startedAt, header.id);
    this.jsonPath = join(dir, `${stem}.json`);
    this.logPath = join(dir, `${stem}.log`);
    this.fd = openSync(this.logPath, "a", 0o640);
    this.writeRecord({ status: "running" });
  }

  write(event: DeployEvent): void {
    const bytes = this.transcript.render(event);
    if (!bytes || this.failed) return;
    try {
      writeSync(this.fd, bytes);
    } catch {
      // A full disk must not stop the deploy; the JSON record at the end still says how it went.
      this.failed = true;
    }
  }

  finish(result: DeployResult, status: "done" | "cancelled" = "done"): void {
    try {
      closeSync(this.fd);
    } catch {}
    this.writeRecord({ status, finishedAt: result.finishedAt, durationMs: result.durationMs, result });
  }

  private writeRecord(extra: Partial<DeployRecord>): void {
    const record: DeployRecord = {
      status: "running",
      id: this.header.id,
      trigger: this.header.trigger,
      repoPath: this.header.repoPath,
      runScript: this.header.runScript,
      startedAt: this.header.startedAt.toISOString(),
      pid: process.pid,
      ...extra,
    };
    const temp = `${this.jsonPath}.tmp`;
    writeFileSync(temp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o640 });
    renameSync(temp, this.jsonPath);
  }
}
