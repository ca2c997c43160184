import { consola } from "consola";
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
  /** The app deployed (multi-app mode). */
  app?: string;
  startedAt: Date;
  trigger: Trigger;
  repoPath: string;
  runScript: string;
}

/** The JSON log file: "running" while the deploy runs, the whole result once it is done. */
export interface DeployRecord {
  status: "running" | "done" | "interrupted" | "cancelled";
  id: string;
  app?: string;
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
 *
 * The files record the deploy; they are not part of it. A log that cannot be written (a file where the
 * directory should be, no permission, a full disk) is reported once on the service's own output and the
 * deploy goes on: nothing here throws, because a throw would leave the deploy without its `[done]` line and
 * its HTTP stream open forever.
 */
export class DeployLog {
  readonly jsonPath: string;
  readonly logPath: string;
  /** Why the files are incomplete, when they are. */
  problem: string | undefined;
  private readonly fd: number | undefined;
  /** The .log stopped (could not be opened or written); the .json record is still tried. */
  private logBroken = false;
  private readonly transcript = new Transcript();

  constructor(
    cwd: string,
    private readonly header: DeployRecordHeader,
  ) {
    const dir = resolve(cwd, LOG_DIR);
    const stem = logStem(header.startedAt, header.id);
    this.jsonPath = join(dir, `${stem}.json`);
    this.logPath = join(dir, `${stem}.log`);
    this.fd = this.open(dir);
    this.writeRecord({ status: "running" });
  }

  write(event: DeployEvent): void {
    // Rendered even when it cannot be written, so the transcript's line state stays right.
    const bytes = this.transcript.render(event);
    if (!bytes || this.fd === undefined || this.logBroken) return;
    try {
      writeSync(this.fd, bytes);
    } catch (error) {
      this.logBroken = true;
      this.fail(`cannot write ${this.logPath}`, error);
    }
  }

  finish(result: DeployResult, status: "done" | "cancelled" = "done"): void {
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {}
    }
    // Tried even after a .log failure: a few hundred bytes may still fit where megabytes of output did not.
    this.writeRecord({ status, finishedAt: result.finishedAt, durationMs: result.durationMs, result });
  }

  private open(dir: string): number | undefined {
    try {
      mkdirSync(dir, { recursive: true });
      return openSync(this.logPath, "a", 0o640);
    } catch (error) {
      this.fail(`cannot create the deploy log in ${dir}`, error);
      return undefined;
    }
  }

  private writeRecord(extra: Partial<DeployRecord>): void {
    const record: DeployRecord = {
      status: "running",
      id: this.header.id,
      ...(this.header.app ? { app: this.header.app } : {}),
      trigger: this.header.trigger,
      repoPath: this.header.repoPath,
      runScript: this.header.runScript,
      startedAt: this.header.startedAt.toISOString(),
      pid: process.pid,
      ...extra,
    };
    const temp = `${this.jsonPath}.tmp`;
    try {
      writeFileSync(temp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o640 });
      renameSync(temp, this.jsonPath);
    } catch (error) {
      this.fail(`cannot write ${this.jsonPath}`, error);
    }
  }

  /** Reports the first failure only: one deploy should not flood the output with the same complaint. */
  private fail(what: string, error: unknown): void {
    if (this.problem) return;
    this.problem = `${what}: ${(error as Error).message}`;
    consola.withTag("service").warn(`deploy ${this.header.id}: ${this.problem}; the deploy goes on without a complete log`);
  }
}
