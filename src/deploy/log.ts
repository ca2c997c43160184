import { consola } from "consola";
import { closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import { Transcript, type DeployEvent, type DeployResult, type Trigger } from "./events.ts";
import { OWN_START } from "./liveness.ts";

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
  /** The start time of `pid` (see liveness.ts), so a reused pid is not mistaken for the deploy's process. */
  pidStart?: string;
  finishedAt?: string;
  durationMs?: number;
  result?: DeployResult;
  /** Outcomes of the outbound calls (commit statuses, notifications), in the order they ended. */
  outbound?: OutboundOutcome[];
}

/** One outbound call's outcome as the record keeps it. */
export interface OutboundOutcome {
  kind: "status" | "notify";
  /** The provider or the format (`github`, `slack`…); never a URL, which may hold a secret. */
  target: string;
  /** The commit state posted, or the notified event. */
  what: string;
  ok: boolean;
  detail: string;
  at: string;
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
  /** Output bytes written so far; past `maxLogBytes` output is no longer written (the service's lines still are). */
  private outputBytes = 0;
  private truncated = false;

  constructor(
    cwd: string,
    private readonly header: DeployRecordHeader,
    private readonly maxLogBytes = Infinity,
  ) {
    const dir = resolve(cwd, LOG_DIR);
    const stem = logStem(header.startedAt, header.id);
    this.jsonPath = join(dir, `${stem}.json`);
    this.logPath = join(dir, `${stem}.log`);
    this.fd = this.open(dir);
    this.writeRecord({ status: "running" });
  }

  write(event: DeployEvent): void {
    if (event.type === "output") {
      this.outputBytes += event.data.length;
      if (this.outputBytes > this.maxLogBytes) {
        if (!this.truncated) {
          this.truncated = true;
          this.writeBytes(this.transcript.line(`[log] truncated: the output passed maxLogBytes (${this.maxLogBytes} bytes); the live stream carried all of it`));
        }
        return;
      }
    }
    // Rendered even when it cannot be written, so the transcript's line state stays right.
    this.writeBytes(this.transcript.render(event));
  }

  private writeBytes(bytes: Uint8Array | undefined): void {
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
      pidStart: OWN_START,
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

/**
 * Adds outbound outcomes to a deploy whose record is finished: their lines to the end of the `.log`, the
 * entries to the record's `outbound`. Files that are gone (pruned) stay gone; nothing here throws.
 */
export function appendOutcomes(jsonPath: string, logPath: string, lines: string[], outcomes: OutboundOutcome[]): void {
  if (lines.length > 0) {
    try {
      // No O_CREAT: a pruned deploy does not come back as a log of a few lines.
      const fd = openSync(logPath, constants.O_WRONLY | constants.O_APPEND);
      try {
        writeSync(fd, lines.map((line) => `${line}\n`).join(""));
      } finally {
        closeSync(fd);
      }
    } catch {}
  }
  try {
    const record = JSON.parse(readFileSync(jsonPath, "utf8")) as DeployRecord;
    record.outbound = [...(record.outbound ?? []), ...outcomes];
    const temp = `${jsonPath}.outbound.tmp`;
    try {
      writeFileSync(temp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o640 });
      renameSync(temp, jsonPath);
    } catch {
      rmSync(temp, { force: true });
    }
  } catch {}
}

function isRunning(jsonPath: string): boolean {
  try {
    return (JSON.parse(readFileSync(jsonPath, "utf8")) as DeployRecord).status === "running";
  } catch {
    return false;
  }
}

/**
 * Each stem's start time in ms: the second in its name, refined to the record's millisecond `startedAt` when
 * other deploys started in the same second (only then is the record read: records can be megabytes), unless
 * that second's deploys are kept whatever their order: all among the newest `keepDeploys` by second, and none
 * older than `cutoff`. Their order changes nothing, so a prune after each deploy does not read every record of
 * a busy second again.
 */
function startTimes(dir: string, stems: string[], keepDeploys: number, cutoff: number): Map<string, number> {
  const perSecond = new Map<string, number>();
  for (const stem of stems) perSecond.set(stem.slice(0, 20), (perSecond.get(stem.slice(0, 20)) ?? 0) + 1);
  const settled = new Set<string>();
  let newer = 0;
  for (const [key, count] of [...perSecond].sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))) {
    newer += count;
    if (newer > keepDeploys) break;
    if (secondOf(key) >= cutoff) settled.add(key);
  }
  const times = new Map<string, number>();
  for (const stem of stems) {
    const key = stem.slice(0, 20);
    const second = secondOf(key);
    let ms = second;
    if (perSecond.get(key)! > 1 && !settled.has(key)) {
      try {
        const precise = Date.parse((JSON.parse(readFileSync(join(dir, `${stem}.json`), "utf8")) as DeployRecord).startedAt);
        if (precise >= second && precise < second + 1000) ms = precise;
      } catch {}
    }
    times.set(stem, ms);
  }
  return times;
}

/** The time of a stem's first 20 characters, `YYYY-MM-DD_HH-mm-ssZ`. */
function secondOf(key: string): number {
  const [, date, hh, mm, ss] = /^(\d{4}-\d{2}-\d{2})_(\d{2})-(\d{2})-(\d{2})Z$/.exec(key)!;
  return Date.parse(`${date}T${hh}:${mm}:${ss}Z`);
}

/**
 * The app a record names, from its first bytes only (records can be megabytes; `app` comes right after
 * `status` and `id`, and app names are plain). Undefined for a single-app record or an unreadable file.
 */
function appOf(jsonPath: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(jsonPath, "r");
    const head = Buffer.alloc(512);
    const text = head.subarray(0, readSync(fd, head, 0, head.length, 0)).toString("utf8");
    return /^\s*"app": "([^"]*)"/m.exec(text.slice(0, text.indexOf('"trigger"') >>> 0))?.[1];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Retention: keeps the files of the newest `keepDeploys` deploys, and (when `keepDays` > 0) only those started
 * in the last `keepDays` days. In multi-app mode (`app` given) it counts that app's deploys only, so one busy
 * app never removes another's history. A deploy still running is never removed. Returns the removed stems.
 */
export function pruneLogs(cwd: string, keepDeploys: number, keepDays: number, now = Date.now(), app?: string): string[] {
  const dir = resolve(cwd, LOG_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const stems = [...new Set(names.filter((n) => LOG_FILE_NAME.test(n)).map((n) => n.replace(/\.(json|log)$/, "")))].filter(
    // Single-app mode counts every deploy in the directory; multi-app mode reads each record's app.
    (stem) => app === undefined || appOf(join(dir, `${stem}.json`)) === app,
  );
  const cutoff = keepDays > 0 ? now - keepDays * 86_400_000 : -Infinity;
  const started = startTimes(dir, stems, keepDeploys, cutoff);
  // Newest first by start time; the name alone orders only to the second (then by the random id).
  stems.sort((a, b) => started.get(b)! - started.get(a)! || (b < a ? -1 : b > a ? 1 : 0));
  const removed: string[] = [];
  stems.forEach((stem, index) => {
    if (index < keepDeploys && started.get(stem)! >= cutoff) return;
    if (isRunning(join(dir, `${stem}.json`))) return;
    for (const ext of [".json", ".log"]) rmSync(join(dir, `${stem}${ext}`), { force: true });
    removed.push(stem);
  });
  return removed;
}
