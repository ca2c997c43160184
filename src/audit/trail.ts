/**
 * The audit trail on disk (docs/audit.md): `.service/audit/audit-YYYY-MM.jsonl`, one JSON line per action, appended
 * under a lock every writing process takes (the server, each CLI command). Beside the files: `last`, the hash of the
 * last line written (a cut end shows), and `anchor`, the hash the first kept line follows once older months were
 * pruned (`audit.keepDays`: whole files only).
 */
import { closeSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_AUDIT_KEEP_DAYS } from "../config/audit.ts";
import {
  createExclusive,
  ensurePrivateDir,
  openForAppend,
  readNoFollow,
  writeAll,
  writeFileAtomic,
} from "../system/files.ts";
import { type AuditEvent, formatLine, GENESIS, hashLine, parseLine } from "./entry.ts";
import { withLock } from "./lock.ts";

export const AUDIT_DIR = join(".service", "audit");
export const LAST_FILE = "last";
export const ANCHOR_FILE = "anchor";
const MONTH_FILE = /^audit-(\d{4})-(\d{2})\.jsonl$/;
const DAY_MS = 86_400_000;

export const auditDir = (cwd: string) => join(cwd, AUDIT_DIR);

/** The monthly files of `dir`, oldest first. */
export function auditFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => MONTH_FILE.test(name))
      .sort();
  } catch {
    return [];
  }
}

/** The first moment after the month of a file's name. */
export function monthEnd(name: string): number {
  const [, year, month] = MONTH_FILE.exec(name) ?? [];
  return Date.UTC(Number(year), Number(month), 1);
}

const monthFile = (time: Date) =>
  `audit-${time.getUTCFullYear()}-${String(time.getUTCMonth() + 1).padStart(2, "0")}.jsonl`;

/** A one-line file's hash (`last`, `anchor`), when it is there. */
export function readHash(file: string): string | undefined {
  try {
    const text = readNoFollow(file).trim();
    return /^[0-9a-f]{64}$/.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

/** The lines of a monthly file, and whether it ends with a whole line. */
export function fileLines(file: string): { lines: string[]; whole: boolean } {
  let text: string;
  try {
    text = readNoFollow(file);
  } catch {
    return { lines: [], whole: true };
  }
  const lines = text.split("\n");
  const whole = lines.at(-1) === "";
  if (whole) lines.pop();
  return { lines, whole };
}

export interface TrailOptions {
  /** Days a month's file is kept after the month; 0 keeps every file. @default 365 */
  keepDays?: number;
  /** @internal Tests: the clock. */
  now?: () => Date;
}

export class AuditTrail {
  readonly dir: string;

  constructor(
    cwd: string,
    private readonly options: TrailOptions = {},
  ) {
    this.dir = auditDir(cwd);
  }

  /** Appends one line for `event`, after the last one any process wrote. Throws when it cannot be written. */
  write(event: AuditEvent): void {
    ensurePrivateDir(this.dir);
    withLock(this.dir, () => {
      const now = this.options.now?.() ?? new Date();
      const files = auditFiles(this.dir);
      const newest = files.at(-1);
      // A clock stepped back into an earlier month still appends to the newest file: the files stay in order.
      const name = newest && newest > monthFile(now) ? newest : monthFile(now);
      const prev = readHash(join(this.dir, LAST_FILE)) ?? this.tailHash(newest) ?? GENESIS;
      const text = formatLine(event, now, prev);
      const created = append(join(this.dir, name), `${text}\n`);
      writeFileAtomic(join(this.dir, LAST_FILE), `${hashLine(text)}\n`, 0o600);
      if (created) this.prune(now);
    });
  }

  /** Writes `event`; a failure is said through `warn`, and what was done stays done. */
  record(event: AuditEvent, warn: (line: string) => void): void {
    try {
      this.write(event);
    } catch (error) {
      warn(`the audit trail in ${this.dir} cannot be written: ${(error as Error).message}`);
    }
  }

  /** The hash of the newest file's last line (the `last` file was lost), or of what the anchor says. */
  private tailHash(newest: string | undefined): string | undefined {
    if (!newest) return readHash(join(this.dir, ANCHOR_FILE));
    const last = fileLines(join(this.dir, newest)).lines.at(-1);
    return last === undefined ? undefined : hashLine(last);
  }

  /**
   * Removes the monthly files whose month ended more than `keepDays` ago (never the newest), the anchor first
   * recording what the first kept line follows. Runs under the lock, when a month's first line is written.
   */
  private prune(now: Date): void {
    const keepDays = this.options.keepDays ?? DEFAULT_AUDIT_KEEP_DAYS;
    if (keepDays === 0) return;
    const files = auditFiles(this.dir);
    const old = files.slice(0, -1).filter((name) => monthEnd(name) + keepDays * DAY_MS < now.getTime());
    if (old.length === 0) return;
    const firstKept = files[old.length]!;
    const first = fileLines(join(this.dir, firstKept)).lines[0];
    const prev = first === undefined ? undefined : parseLine(first)?.prev;
    if (prev) writeFileAtomic(join(this.dir, ANCHOR_FILE), `${prev}\n`, 0o600);
    for (const name of old) rmSync(join(this.dir, name), { force: true });
  }
}

/** Appends `text` to `file`, creating it (never through a link); true when it was created. */
function append(file: string, text: string): boolean {
  let fd: number;
  let created = false;
  try {
    fd = openForAppend(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    fd = createExclusive(file, 0o600);
    created = true;
  }
  try {
    writeAll(fd, Buffer.from(text));
  } finally {
    closeSync(fd);
  }
  return created;
}
