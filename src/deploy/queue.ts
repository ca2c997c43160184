import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { isRunning, OWN_START } from "./liveness.ts";

/** The queue key of a repository: its real path, so two spellings of one directory share a queue. */
export function queueKey(repoPath: string): string {
  try {
    return realpathSync(repoPath);
  } catch {
    return resolve(repoPath);
  }
}

/** How often a waiter looks at the other processes' tickets (same-process hand-overs are immediate). */
const POLL_MS = 100;

/**
 * Where the tickets of a repository live: under its git directory, so every process deploying it (the server,
 * a `deploy` in a shell) sees the same queue. A directory that is not a repository uses the temp dir.
 */
export function ticketDir(key: string): string {
  const dotGit = join(key, ".git");
  try {
    const st = statSync(dotGit);
    if (st.isDirectory()) return join(dotGit, "service-deploy-queue");
    // A worktree or submodule: `.git` is a file naming the real git directory.
    const match = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, "utf8"));
    if (match) return join(resolve(key, match[1]!.trim()), "service-deploy-queue");
  } catch {}
  return join(tmpdir(), `service-deploy-queue-${createHash("sha256").update(key).digest("hex").slice(0, 16)}`);
}

/**
 * Why deploys of a repository could not take queue tickets, if they could not: the ticket directory is not a
 * directory, or this user may not write it (or, before it exists, its parent). For `service check`.
 */
export function ticketDirProblem(key: string): string | undefined {
  const dir = ticketDir(key);
  try {
    if (!statSync(dir).isDirectory()) return `${dir} is not a directory: deploys cannot queue (remove it)`;
  } catch {}
  const target = existsSync(dir) ? dir : dirname(dir);
  try {
    accessSync(target, constants.W_OK);
    return undefined;
  } catch {
    return `${target} is not writable by this user: deploys cannot queue, and git pull cannot write either`;
  }
}

let sequence = 0;

/**
 * A ticket file: `<ms>-<seq>-<pid>-<start>`. Names sort in arrival order; the pid and its start time tell
 * whether the holder still lives, so a ticket left by a killed process is skipped and removed.
 */
function newTicket(): string {
  sequence = (sequence + 1) % 1e9;
  return `${Date.now().toString().padStart(15, "0")}-${sequence.toString().padStart(9, "0")}-${process.pid}-${OWN_START}`;
}

function liveTickets(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const live: string[] = [];
  for (const name of names.sort()) {
    const [, , pid, start] = name.split("-");
    if (!pid || !start) continue;
    if (isRunning(Number(pid), start)) live.push(name);
    else {
      try {
        unlinkSync(join(dir, name));
      } catch {}
    }
  }
  return live;
}

interface Entry {
  ticket: string;
  start: () => void;
  cancel: (reason: string) => void;
  started: boolean;
}

/** Refused because the repository's queue is full. */
export class QueueFullError extends Error {
  override name = "QueueFullError";
}

/**
 * Deploys of one repoPath run one at a time in arrival order, across processes. Each deploy takes a ticket
 * file at arrival; the oldest live ticket runs. In this process a FIFO map of lanes (one per repoPath) hands
 * the turn over at once and polls only while another process holds the repository.
 */
export class DeployQueue {
  private readonly lanes = new Map<string, { dir: string; entries: Entry[]; timer?: ReturnType<typeof setTimeout> }>();

  /** Deploys waiting (not running) for this key in this process. */
  waiting(key: string): number {
    return this.lanes.get(key)?.entries.filter((e) => !e.started).length ?? 0;
  }

  /**
   * Runs `task` when its turn comes. `onQueued(position)` is called once, at once, when it has to wait
   * (1 = next). `onCancel(reason)` replaces the task when the queue is cancelled before its turn. Throws
   * QueueFullError, and runs nothing, when `limit` deploys already wait for this key in this process.
   */
  run<T>(
    key: string,
    task: () => Promise<T>,
    hooks: { limit?: number; onQueued?: (position: number) => void; onCancel: (reason: string) => Promise<T> },
  ): Promise<T> {
    let lane = this.lanes.get(key);
    if (lane && this.waiting(key) >= (hooks.limit ?? Infinity)) {
      throw new QueueFullError(`${this.waiting(key)} deploys are already waiting for ${key}`);
    }
    if (!lane) {
      const dir = ticketDir(key);
      mkdirSync(dir, { recursive: true });
      this.lanes.set(key, (lane = { dir, entries: [] }));
    }
    const laneRef = lane;
    const ticket = newTicket();
    writeFileSync(join(laneRef.dir, ticket), `${process.pid}\n`);
    return new Promise<T>((resolvePromise, reject) => {
      const entry: Entry = {
        ticket,
        started: false,
        start: () => {
          entry.started = true;
          task()
            .then(resolvePromise, reject)
            .finally(() => this.release(key, entry));
        },
        cancel: (reason) => {
          if (entry.started) return;
          entry.started = true;
          hooks.onCancel(reason).then(resolvePromise, reject);
          this.release(key, entry);
        },
      };
      laneRef.entries.push(entry);
      const position = this.check(key);
      if (!entry.started) hooks.onQueued?.(Math.max(1, position.get(entry) ?? 1));
    });
  }

  /** Ends every deploy that has not started yet with `reason`; running ones go on. */
  cancelWaiting(reason: string): void {
    for (const lane of this.lanes.values()) {
      for (const entry of lane.entries.filter((e) => !e.started)) entry.cancel(reason);
    }
  }

  private release(key: string, entry: Entry): void {
    const lane = this.lanes.get(key);
    if (!lane) return;
    try {
      unlinkSync(join(lane.dir, entry.ticket));
    } catch {}
    lane.entries = lane.entries.filter((e) => e !== entry);
    if (lane.entries.length === 0) {
      clearTimeout(lane.timer);
      this.lanes.delete(key);
    } else this.check(key);
  }

  /** Starts this lane's next entry when its ticket is the oldest live one; returns each entry's position. */
  private check(key: string): Map<Entry, number> {
    const lane = this.lanes.get(key);
    const positions = new Map<Entry, number>();
    if (!lane) return positions;
    clearTimeout(lane.timer);
    lane.timer = undefined;
    const live = liveTickets(lane.dir);
    for (const entry of lane.entries) positions.set(entry, live.indexOf(entry.ticket));
    const head = lane.entries[0];
    if (!head || head.started) return positions;
    if (live[0] === head.ticket) head.start();
    else {
      // Another process holds the repository (or one of its tickets came first): look again shortly.
      if (!live.includes(head.ticket)) {
        // The ticket vanished (its directory was cleaned): take it again, keeping its place by name.
        try {
          mkdirSync(lane.dir, { recursive: true });
          writeFileSync(join(lane.dir, head.ticket), `${process.pid}\n`);
        } catch {}
      }
      lane.timer = setTimeout(() => this.check(key), POLL_MS);
    }
    return positions;
  }
}
