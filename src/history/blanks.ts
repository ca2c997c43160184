import { closeSync, fchmodSync, linkSync, openSync, readdirSync, renameSync, constants } from "node:fs";
import { dirname, join } from "node:path";
import { randomHex } from "../system/digest.ts";
import { createExclusive, ensurePrivateDir, openForAppend, removeQuietly, writeAll } from "../system/files.ts";
import { OWN_START, processAlive } from "../system/liveness.ts";

/**
 * Blank files made ahead of need for the deploy log directory, so that a deploy's way to its first line makes no new
 * file: its running record is written into a blank and renamed to its name, and its `.log` is a blank linked to its
 * name (a link, like an exclusive create, never replaces a file already there). Making a file (a new inode) is what
 * costs on some disks: 0.6–0.9 ms each on the ext4 the benchmark ran on, against 0.02 ms for a rename or a link
 * (docs/performance.md). The server makes two after each deploy's `[done]` (deploy/deployer.ts); a deploy that finds
 * none makes its files itself. Blanks wait in `.service/blanks/`, beside the log directory (on the same filesystem,
 * or the rename fails and the deploy makes its files itself), named `<pid>-<start>-<random>`: those of a process that
 * is gone are removed at the next start (queue/recovery.ts).
 */

const BLANK = /^(\d+)-(\d+)-[0-9a-f]{16}$/;
/** Two: a deploy's record and its `.log`. */
const KEEP = 2;
const { O_NOFOLLOW, O_WRONLY } = constants;

/** This process's blanks, by the log directory they are for. */
const ready = new Map<string, string[]>();

/** Where the blanks for the log directory `logs` wait. */
const blanksFor = (logs: string) => join(dirname(logs), "blanks");

/** Makes blanks for the log directory `logs` until two are ready; a failure (a full disk) only leaves fewer. */
export function makeBlanks(logs: string): void {
  let blanks = ready.get(logs);
  if (!blanks) ready.set(logs, (blanks = []));
  try {
    const dir = blanksFor(logs);
    ensurePrivateDir(dir);
    while (blanks.length < KEEP) {
      const file = join(dir, `${process.pid}-${OWN_START}-${randomHex(8)}`);
      closeSync(createExclusive(file));
      blanks.push(file);
    }
  } catch {}
}

/**
 * Replaces `file` with `text` through a blank of its directory, as writeFileAtomic does through a new temp file: a
 * reader sees the old file or the whole new one. False when no blank is ready, or it could not be used (nothing of
 * it is left): the caller writes the file its own way, which says why when that fails too.
 */
export function writeThroughBlank(file: string, text: string, mode = 0o640): boolean {
  const blank = ready.get(dirname(file))?.pop();
  if (!blank) return false;
  try {
    const fd = openSync(blank, O_WRONLY | O_NOFOLLOW);
    try {
      fchmodSync(fd, mode);
      writeAll(fd, Buffer.from(text));
    } finally {
      closeSync(fd);
    }
    renameSync(blank, file);
    return true;
  } catch {
    removeQuietly(blank);
    return false;
  }
}

/**
 * Opens `file`, which must not exist, for appending, from a blank of its directory linked to its name; undefined when
 * no blank is ready or it could not be linked (a file at that name: the caller's own exclusive create says so).
 */
export function openBlank(file: string): number | undefined {
  const blank = ready.get(dirname(file))?.pop();
  if (!blank) return undefined;
  try {
    linkSync(blank, file);
  } catch {
    return undefined;
  } finally {
    removeQuietly(blank);
  }
  return openForAppend(file);
}

/** Removes the blanks for the log directory `logs` of processes that are gone. */
export function removeStaleBlanks(logs: string): void {
  const dir = blanksFor(logs);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const own = ready.get(logs) ?? [];
  for (const name of names) {
    const match = BLANK.exec(name);
    if (!match || own.includes(join(dir, name))) continue;
    const mine = Number(match[1]) === process.pid && match[2] === OWN_START;
    if (mine || !processAlive(Number(match[1]), match[2])) removeQuietly(join(dir, name));
  }
}
