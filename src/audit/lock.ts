/**
 * An exclusive lock across processes on one directory (the audit trail's): the server and every CLI command append
 * to the same chain, and each append reads the last line's hash and writes the next line under it. A lock file made
 * with O_EXCL names its holder (pid and start time, as the queue's tickets do); a holder that died leaves a lock the
 * next writer takes over. Held only for a synchronous append, so a wait is short and bounded.
 */
import { closeSync, linkSync, renameSync, statSync, unlinkSync } from "node:fs";
import { randomHex } from "../system/digest.ts";
import { join } from "node:path";
import { createExclusive, readNoFollow, writeAll } from "../system/files.ts";
import { OWN_START, processAlive } from "../system/liveness.ts";

/** How long a writer waits for another's append at most. */
const MAX_WAIT_MS = 10_000;
const PAUSE_MS = 2;

/** An empty lock older than this was left by a writer that died between creating it and naming itself. */
const EMPTY_STALE_MS = 5_000;

const fileAge = (file: string) => {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
};

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Runs `work` holding the lock of `dir`; throws when it cannot be had within MAX_WAIT_MS. */
export function withLock<T>(dir: string, work: () => T): T {
  const lock = join(dir, ".lock");
  const deadline = Date.now() + MAX_WAIT_MS;
  for (let tries = 0; ; tries++) {
    if (take(lock)) break;
    if (Date.now() > deadline || tries > MAX_WAIT_MS / PAUSE_MS)
      throw new Error(`the audit trail's lock ${lock} is held by another process`);
    Atomics.wait(pause, 0, 0, PAUSE_MS);
  }
  try {
    return work();
  } finally {
    try {
      unlinkSync(lock);
    } catch {}
  }
}

/** Takes the lock when it is free, or held by a process that is gone. */
function take(lock: string): boolean {
  try {
    const fd = createExclusive(lock, 0o600);
    try {
      writeAll(fd, Buffer.from(`${process.pid} ${OWN_START}`));
    } finally {
      closeSync(fd);
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  let holder: string;
  try {
    holder = readNoFollow(lock);
  } catch {
    return false; // released meanwhile: the next try takes it
  }
  const [pid, start] = holder.trim().split(" ");
  // A lock being written has no holder yet (for a moment: one left empty by a crash is stale); one whose holder
  // lives is held.
  if (pid ? processAlive(Number(pid), start) : Date.now() - (fileAge(lock) ?? Date.now()) < EMPTY_STALE_MS)
    return false;
  // Moved aside under a name of our own: of two writers that found it stale, one moves it.
  const aside = `${lock}.stale-${randomHex(8)}`;
  try {
    renameSync(lock, aside);
  } catch {
    return false;
  }
  try {
    // What was moved is another's fresh lock (taken between the read and the rename): it goes back.
    if (readNoFollow(aside) !== holder) linkSync(aside, lock);
  } catch {}
  try {
    unlinkSync(aside);
  } catch {}
  return false;
}
