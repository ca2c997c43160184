import { closeSync } from "node:fs";
import { join, resolve } from "node:path";
import { Transcript } from "./transcript.ts";
import type { DeployEvent, DeployPhase, DeployResult } from "../types.ts";
import type { WatchProgress } from "../watch-types.ts";
import {
  createExclusive,
  ensurePrivateDir,
  isNoSpace,
  overwriteInPlace,
  writeAll,
  writeFileAtomic,
} from "../system/files.ts";
import { defaultLogger, type Logger } from "../system/logger.ts";
import { LOG_DIR, logStem, recordOf, type DeployRecord, type DeployRecordHeader } from "./record.ts";
import { compactRecord, MAX_LOG_BUDGET, RECORD_RESERVE, rewriteInReserve, spareBytes } from "./room.ts";
import { holdPending, markClosed, markOpen } from "./open-records.ts";
import { openBlank, writeThroughBlank } from "./blanks.ts";

export interface DeployLogOptions {
  /** Most output bytes the .log keeps. */
  maxLogBytes?: number;
  /** Frees room (retention) when a write finds the disk full. */
  makeRoom?: () => void;
  /** Where a log that cannot be written is reported. @default consola.withTag("service") */
  logger?: Logger;
}

/** How long the running record's phases wait to be written at most: a quick deploy writes its record twice. */
export const PHASES_EVERY_MS = 1000;

/**
 * Writes one deploy's two files: every event to the human `.log` as it happens, and the `.json` record at the
 * start and at the end (whole at every moment: `writeRecord`).
 *
 * The files record the deploy; they are not part of it. A log that cannot be written (a file where the
 * directory should be, no permission, a full disk) is reported once on the service's own output and in the
 * deploy's stream (`takeNotice`), and the deploy goes on: nothing here throws, because a throw would leave the
 * deploy without its `[done]` line and its HTTP stream open forever. On a full disk the record still ends: old
 * deploys are pruned to make room, else the final record is written without the output into the room the
 * "running" record reserved, else it is kept in memory and written once there is room.
 */
export class DeployLog {
  readonly jsonPath: string;
  readonly logPath: string;
  /** Why the files are incomplete, when they are. */
  problem: string | undefined;
  private noticed = false;
  /** A write found the disk full (not a permission or a path problem): worth trying again later. */
  private noSpace = false;
  private readonly fd: number | undefined;
  /** The .log stopped (could not be opened or written); the .json record is still tried. */
  private logBroken = false;
  private readonly transcript = new Transcript();
  /** Output bytes written so far; past `maxLogBytes` output is no longer written (the service's lines still are). */
  private outputBytes = 0;
  private truncated = false;
  private readonly maxLogBytes: number;
  private readonly dir: string;
  /** Bytes the .log may still take before the free space is looked at again (see RECORD_ROOM_BYTES). */
  private budget = 0;
  /** What the running record says beside its header: what it waits for, the phases that ended. */
  private readonly running: Pick<DeployRecord, "waiting" | "phases" | "watching"> = {};
  private ended = false;
  /** The length of the JSON at the start of the padded record file this wrote; -1: the file is not padded. */
  private padded = -1;
  /** The write of the running record's phases that is due (PHASES_EVERY_MS). */
  private phasesDue: ReturnType<typeof setTimeout> | undefined;

  constructor(
    cwd: string,
    private readonly header: DeployRecordHeader,
    private readonly options: DeployLogOptions = {},
  ) {
    this.maxLogBytes = options.maxLogBytes ?? Infinity;
    const dir = resolve(cwd, LOG_DIR);
    this.dir = dir;
    const stem = logStem(header.startedAt, header.id);
    this.jsonPath = join(dir, `${stem}.json`);
    this.logPath = join(dir, `${stem}.log`);
    markOpen(this.jsonPath, header.startedAt.getTime());
    this.fd = this.open(dir);
  }

  write(event: DeployEvent): void {
    if (event.type === "output") {
      this.outputBytes += event.data.length;
      if (this.outputBytes > this.maxLogBytes) {
        if (!this.truncated) {
          this.truncated = true;
          this.writeBytes(
            this.transcript.line(
              `[log] truncated: the output passed maxLogBytes (${this.maxLogBytes} bytes); the live stream carried all of it`,
            ),
          );
        }
        return;
      }
    }
    // Rendered even when it cannot be written, so the transcript's line state stays right.
    this.writeBytes(this.transcript.render(event));
  }

  /**
   * What the running deploy waits for (`checks`: a gate), written into its running record so every process's
   * `service status` sees it; undefined when it no longer waits.
   */
  waiting(what: string | undefined): void {
    this.running.waiting = what;
    this.writeRunning();
  }

  /** A watch's progress, written into the running record; undefined once the watch ended. */
  watching(progress: WatchProgress | undefined): void {
    if (this.ended) return;
    this.running.watching = progress;
    this.writeRunning();
  }

  /**
   * The phases that ended so far, written into the running record (a deploy's page draws them): PHASES_EVERY_MS
   * after the first one not written yet, never once the record is final. A deploy quicker than that writes its record
   * twice, running and final, not once more per phase.
   */
  phases(ended: DeployPhase[]): void {
    if (this.ended) return;
    this.running.phases = [...ended];
    this.phasesDue ??= setTimeout(() => {
      this.phasesDue = undefined;
      if (!this.ended) this.writeRunning();
    }, PHASES_EVERY_MS);
  }

  private writeRunning(): void {
    const { waiting, phases, watching } = this.running;
    // Fields that are undefined are left out of the JSON.
    const extra = { waiting, phases: phases?.length ? phases : undefined, watching };
    this.writeRecord(JSON.stringify(this.record(extra), null, 2), true);
  }

  /** The line for the deploy's stream saying why its log files are incomplete: once, when they are. */
  takeNotice(): string | undefined {
    if (!this.problem || this.noticed) return undefined;
    this.noticed = true;
    return `${this.problem}; the deploy goes on and this stream carries all of its output`;
  }

  private writeBytes(bytes: Uint8Array | undefined): void {
    if (!bytes || this.fd === undefined || this.logBroken) return;
    if (!this.roomFor(bytes.length)) {
      const kept = Object.assign(new Error("no space left on device (the rest is kept for the deploy records)"), {
        code: "ENOSPC",
      });
      if (!(this.makeRoom(kept) && this.roomFor(bytes.length))) {
        this.logBroken = true;
        this.fail(`cannot write ${this.logPath}`, kept);
        return;
      }
    }
    let rest = bytes;
    for (let attempt = 0; ; attempt++) {
      try {
        writeAll(this.fd, rest);
        return;
      } catch (error) {
        rest = rest.subarray((error as { written?: number }).written ?? 0);
        if (attempt === 0 && this.makeRoom(error)) continue;
        this.logBroken = true;
        this.fail(`cannot write ${this.logPath}`, error);
        return;
      }
    }
  }

  /** Ends the record; `extra` adds what only the end knows (who cancelled). */
  finish(result: DeployResult, status: DeployRecord["status"] = "done", extra: Partial<DeployRecord> = {}): void {
    this.ended = true;
    clearTimeout(this.phasesDue);
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {}
    }
    // Tried even after a .log failure: a few hundred bytes may still fit where megabytes of output did not.
    // But the full record (with up to MiBs of captured output) is written only above the records' room.
    const full = this.record({
      status,
      ...extra,
      finishedAt: result.finishedAt,
      durationMs: result.durationMs,
      result,
    });
    const json = JSON.stringify(full, null, 2);
    const fits = spareBytes(this.dir) > json.length;
    if (!(fits && this.writeRecord(json))) {
      const why = this.problem ?? (fits ? "the record could not be written" : "the disk is nearly full");
      const compact = `${JSON.stringify(compactRecord(full, result, why), null, 2)}\n`;
      const written =
        tryWrite(() => overwriteInPlace(this.jsonPath, compact)) ||
        tryWrite(() => writeFileAtomic(this.jsonPath, compact));
      if (!written && this.noSpace) {
        // Room may come back (retention, an operator): the outcome waits in memory, the newest ones kept.
        // Only the compact record is held: a few KiB each, where the full one can be megabytes.
        const retry = () => tryWrite(() => writeFileAtomic(this.jsonPath, compact));
        holdPending(this.jsonPath, this.header.startedAt.getTime(), retry);
      }
    }
    markClosed(this.jsonPath);
  }

  /**
   * The running record first, then the .log: a reader listing in between sees a running deploy, never a .log
   * alone (which is what a deploy leaves that found no room even for its record).
   */
  private open(dir: string): number | undefined {
    try {
      ensurePrivateDir(dir);
      this.writeRecord(JSON.stringify(this.record({ status: "running" }), null, 2), true);
      return openBlank(this.logPath) ?? createExclusive(this.logPath);
    } catch (error) {
      this.fail(`cannot create the deploy log in ${dir}`, error);
      return undefined;
    }
  }

  private record(extra: Partial<DeployRecord>): DeployRecord {
    return recordOf(this.header, extra);
  }

  /**
   * Writes the record (its JSON), once more after making room; `reserve` pads it for the final outcome. In the padded
   * file made at the start, while the JSON and the one before it fit its first page: one write there (no new file
   * renamed over it, a journal commit on ext4 on every deploy's way to `[done]`), which a kill cannot cut in two.
   * Otherwise a new file renamed over it: a reader never sees half of it either way.
   */
  private writeRecord(json: string, reserve = false): boolean {
    const bytes = Buffer.from(json);
    if (rewriteInReserve(this.jsonPath, bytes, this.padded)) {
      this.padded = bytes.length;
      return true;
    }
    const text = reserve && json.length < RECORD_RESERVE ? `${json.padEnd(RECORD_RESERVE - 1)}\n` : `${json}\n`;
    for (let attempt = 0; ; attempt++) {
      try {
        if (!(reserve && writeThroughBlank(this.jsonPath, text))) writeFileAtomic(this.jsonPath, text);
        this.padded = text.length > json.length + 1 ? bytes.length : -1;
        return true;
      } catch (error) {
        if (attempt === 0 && this.makeRoom(error)) continue;
        this.fail(`cannot write ${this.jsonPath}`, error);
        return false;
      }
    }
  }

  /** Whether `length` more bytes of .log leave the records' room free (statfs only once the budget is spent). */
  private roomFor(length: number): boolean {
    if (length <= this.budget) {
      this.budget -= length;
      return true;
    }
    const spare = spareBytes(this.dir) - length;
    if (spare < 0) return false;
    // A quarter of what is spare: deploys writing at once must not all spend the same room.
    this.budget = Math.min(MAX_LOG_BUDGET, spare / 4);
    return true;
  }

  /** On a full disk, runs retention for room; true when a retry is worth it. */
  private makeRoom(error: unknown): boolean {
    if (!isNoSpace(error)) return false;
    this.noSpace = true;
    if (!this.options.makeRoom) return false;
    try {
      this.options.makeRoom();
    } catch {}
    return true;
  }

  /** Reports the first failure only: one deploy should not flood the output with the same complaint. */
  private fail(what: string, error: unknown): void {
    if (this.problem) return;
    this.problem = `${what}: ${(error as Error).message}`;
    (this.options.logger ?? defaultLogger()).warn(
      `deploy ${this.header.id}: ${this.problem}; the deploy goes on without a complete log`,
    );
  }
}

function tryWrite(write: () => void): boolean {
  try {
    write();
    return true;
  } catch {
    return false;
  }
}
