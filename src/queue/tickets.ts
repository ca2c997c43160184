import { sha256Hex } from "../system/digest.ts";
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { removeQuietly } from "../system/files.ts";
import { groupAlive, type GroupRecorder } from "../system/groups.ts";
import { OWN_START, processAlive } from "../system/liveness.ts";
import {
  ownSeats,
  ownTicketName,
  ownTicket,
  parseSeat,
  readSeat,
  type SeatState,
  seatName,
  type TicketContent,
  ticketName,
  ticketSeat,
  writeSeat,
} from "./seats.ts";

export type { TicketContent } from "./seats.ts";

/**
 * The tickets of one repository's deploy queue, shared by every process that deploys it.
 *
 * The order is Lamport's bakery, on files, and never the wall clock (a clock stepped back once made a later
 * arrival sort first and wedged the queue): each process keeps its tickets in seats of its own (seats.ts), and a
 * ticket's number is 1 + the largest number of any seat, taken while its seat says `choosing`; a waiter runs only
 * when no other process is choosing and its ticket is the smallest live one. A number taken while another is being
 * chosen can be equal (the pid breaks the tie), never smaller than a running deploy's: that one was the smallest
 * when it started and could not start while anyone chose.
 *
 * A ticket is named `<number>-<pid>-<start>-<seat>` (seats.ts); the pid and its start time tell whether its holder
 * lives. Its content names the deploy and, while a command of the deploy runs, that command's process group: a holder
 * killed mid-deploy leaves a seat whose ticket still holds the queue while its group has processes (see recovery.ts).
 */

export interface TicketScan {
  /** The ticket directory is gone (removed with its repository, or by hand). */
  missing: boolean;
  /** Another live process is taking a ticket: nobody may start until it has one (`live` may lack it yet). */
  choosing: boolean;
  /** Live tickets in queue order: held by a live process, or left by a dead one with a group still running. */
  live: string[];
  /** The tickets of dead holders whose process groups still run. */
  orphans: { name: string; content: TicketContent }[];
}

const EMPTY: SeatState = { n: 0, choosing: false, groups: [] };

function list(dir: string): string[] | undefined {
  try {
    return readdirSync(dir);
  } catch {
    return undefined;
  }
}

/**
 * Takes a ticket behind every live one, in a free seat of this process (made the first time). Throws when the
 * directory cannot be written (it is never created here). A seat that does not read (being made, or met in the
 * middle of a write) counts as no number: as in Lamport's bakery, the number of a process that is choosing may read
 * as anything, and that process then waits for this one's.
 */
export function takeTicket(dir: string, content: TicketContent): string {
  const seats = ownSeats(dir);
  let k = seats.findIndex((seat) => !seat.ticket);
  if (k < 0) k = seats.length;
  writeSeat(dir, k, { ...EMPTY, choosing: true });
  try {
    let largest = 0;
    for (const seat of seats) if (seat.ticket) largest = Math.max(largest, ticketSeat(seat.ticket)!.n);
    for (const name of readdirSync(dir)) {
      const holder = parseSeat(name);
      if (!holder || (holder.pid === process.pid && holder.start === OWN_START)) continue;
      const state = readSeat(join(dir, name));
      if (typeof state === "object") largest = Math.max(largest, state.n);
    }
    const n = largest + 1;
    // The number first, still choosing, then the end of choosing: each write changes one of the two, so a read
    // that meets a write half done finds either choosing, or the number whole (seats.ts `text`).
    writeSeat(dir, k, { n, choosing: true, ...content });
    writeSeat(dir, k, { n, choosing: false, ...content });
    return (seats[k]!.ticket = ownTicketName(n, k));
  } catch (error) {
    giveBack(dir, k);
    throw error;
  }
}

/** Empties this process's seat `k`: it holds no ticket, and is free for the next. */
function giveBack(dir: string, k: number): void {
  const seat = ownSeats(dir)[k];
  if (!seat) return;
  seat.ticket = undefined;
  try {
    writeSeat(dir, k, EMPTY);
  } catch {
    removeQuietly(join(dir, seatName(process.pid, OWN_START, k)));
    seat.made = false;
  }
}

/**
 * Replaces a held ticket's content, in place in its seat (one write; see seats.ts). A holder killed mid-write has
 * written all of it or none (one page, one write). A ticket given back is not written again: its seat may hold
 * another ticket by then.
 */
export function updateTicket(dir: string, name: string, content: TicketContent): void {
  const seat = ticketSeat(name);
  if (!seat || !ownTicket(dir, name)) return;
  try {
    writeSeat(dir, seat.k, { n: seat.n, choosing: false, ...content });
  } catch {}
}

/**
 * The recorder that keeps a ticket naming the process groups of its deploy's commands (see recovery.ts): a start
 * is written at once (a holder killed right after must leave its group named); an end on the next turn of the event
 * loop, or with the next start if that comes first: not between a command's exit and what follows it (the next
 * command, the `[done]` line). A group named a turn too long is one whose leader has exited: recovery stops what is
 * left of it, as it would have a moment earlier. A ticket given back is not written again (updateTicket never
 * creates one).
 */
export function ticketRecorder(dir: string, ticket: () => string, content: TicketContent): GroupRecorder {
  let ending: ReturnType<typeof setImmediate> | undefined;
  const write = () => {
    clearImmediate(ending);
    ending = undefined;
    updateTicket(dir, ticket(), content);
  };
  return {
    started: (group) => {
      content.groups.push(group);
      write();
    },
    ended: (pgid) => {
      content.groups = content.groups.filter((g) => g.pgid !== pgid);
      ending ??= setImmediate(write);
    },
  };
}

/** Gives a ticket back: this process's own seat is emptied for its next ticket; a dead holder's seat is removed. */
export function dropTicket(dir: string, name: string): void {
  const seat = ticketSeat(name);
  if (!seat) return;
  if (ownTicket(dir, name)) giveBack(dir, seat.k);
  else if (seat.pid !== process.pid || seat.start !== OWN_START) removeQuietly(join(dir, seat.file));
}

export function readTicket(dir: string, name: string): TicketContent {
  const seat = ticketSeat(name);
  const state = seat ? readSeat(join(dir, seat.file)) : undefined;
  if (typeof state !== "object") return { groups: [] };
  const { n: _n, choosing: _choosing, ...content } = state;
  return content;
}

/**
 * The queue as it stands. The seats of dead processes are removed on the way, unless their ticket's process
 * groups still run (an orphan, which holds the queue until recovery.ts stops them).
 */
export function scanTickets(dir: string): TicketScan {
  const names = list(dir);
  if (!names) return { missing: true, choosing: false, live: [], orphans: [] };
  const seats = ownSeats(dir);
  const live: string[] = [];
  const orphans: TicketScan["orphans"] = [];
  let choosing = false;
  for (const [k, seat] of seats.entries()) {
    if (!seat.made) continue;
    if (!names.includes(seatName(process.pid, OWN_START, k))) {
      // Removed by hand: its ticket is lost (the queue takes another), and the seat is made again when needed.
      seats[k] = { made: false };
    } else if (seat.ticket) live.push(seat.ticket);
  }
  for (const name of names) {
    const holder = parseSeat(name);
    if (!holder) continue;
    const mine = holder.pid === process.pid && holder.start === OWN_START;
    // A seat bearing this process's pid and start that it did not make is an earlier process's (no /proc).
    if (mine && seats[holder.k]?.made) continue;
    const file = join(dir, name);
    const state = readSeat(file);
    if (state === "gone") continue;
    const ticket = state && ticketName(state.n, holder.pid, holder.start, holder.k);
    if (!mine && processAlive(holder.pid, holder.start)) {
      // One that does not read as a seat is taken as choosing: it is looked at again on the next turn.
      if (!state || state.choosing) choosing = true;
      else if (state.n > 0) live.push(ticket!);
    } else if (state && state.n > 0 && state.groups.some(groupAlive)) {
      live.push(ticket!);
      orphans.push({ name: ticket!, content: state });
    } else removeQuietly(file);
  }
  return { missing: false, choosing, live: live.sort(), orphans };
}

/** Makes the ticket directory, only inside a git directory that exists: never a skeleton of a removed repository. */
export function makeTicketDir(dir: string): void {
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

/** The queue key of a repository: its real path, so two spellings of one directory share a queue. */
export function queueKey(repoPath: string): string {
  try {
    return realpathSync(repoPath);
  } catch {
    return resolve(repoPath);
  }
}

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
  return join(tmpdir(), `service-deploy-queue-${sha256Hex(key).slice(0, 16)}`);
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
