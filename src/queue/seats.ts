import { closeSync } from "node:fs";
import { join } from "node:path";
import { createExclusive, readNoFollow, removeQuietly, writeAll, writeAtStart } from "../system/files.ts";
import { OWN_START } from "../system/liveness.ts";
import type { Group } from "../system/groups.ts";

/**
 * The seats of a ticket directory (tickets.ts): the files a process keeps its tickets in, one per ticket it may hold
 * at once there, `seat-<pid>-<start>-<k>`. A seat is made the first time it is needed and rewritten in place after
 * (one write at its start, padded with spaces to its length: it never shrinks), so taking and giving back a ticket
 * makes no new file in the directory (a new file costs 0.6–0.9 ms on the ext4 the benchmark ran on, a write into one
 * 0.01 ms). It holds the bakery's state, `n` (0: no ticket) and `choosing`, then the ticket's content (`text`). A seat
 * stays while its process lives; the next process to look removes the seats of one that died (tickets.ts).
 */

/** A ticket's content: what a process that finds its holder dead needs. */
export interface TicketContent {
  /** The deploy's id, to find its log when it has to be marked. */
  id?: string;
  /** The directory of the deploy's log files. */
  logs?: string;
  /** The process groups of the deploy's commands running now. */
  groups: Group[];
  /** A build slot's ticket (slots.ts): the app of the deploy, and whether it holds its slot now. */
  app?: string;
  holding?: boolean;
}

const SEAT = /^seat-(\d+)-(\d+)-(\d+)$/;
const TICKET = /^(\d{15})-(\d+)-(\d+)-(\d+)(?:\.\d+)?$/;

/** What a seat says: its ticket's number (0: none), whether its process is taking one now, and the ticket's content. */
export interface SeatState extends TicketContent {
  n: number;
  choosing: boolean;
}

/** A seat of this process: the ticket it holds, if any, and whether its file was made. */
interface OwnSeat {
  ticket?: string;
  made: boolean;
}

/** This process's seats, per ticket directory, by their number k. */
const own = new Map<string, OwnSeat[]>();

export function ownSeats(dir: string): OwnSeat[] {
  let seats = own.get(dir);
  if (!seats) own.set(dir, (seats = []));
  return seats;
}

export const seatName = (pid: number | string, start: string, k: number | string) => `seat-${pid}-${start}-${k}`;

/** A seat's holder, from its file name; undefined when the name is not a seat's. */
export function parseSeat(name: string): { pid: number; start: string; k: number } | undefined {
  const match = SEAT.exec(name);
  return match ? { pid: Number(match[1]), start: match[2]!, k: Number(match[3]) } : undefined;
}

/**
 * A ticket's name: its number, then its holder's pid (the tie-break), start and seat; sorted as strings, in queue
 * order. This process's own tickets also carry how many it took (`.<count>`): a ticket given back never shares a
 * name with a later one in the same seat, so a late write for it cannot land in the later one.
 */
export const ticketName = (n: number, pid: number, start: string, k: number, count?: number) =>
  `${String(n).padStart(15, "0")}-${String(pid).padStart(10, "0")}-${start}-${k}${count ? `.${count}` : ""}`;

let taken = 0;

/** The name of the ticket this process takes now, numbered `n`, in its seat `k`. */
export const ownTicketName = (n: number, k: number) => ticketName(n, process.pid, OWN_START, k, ++taken);

/** The seat a ticket is held in, and its number; undefined when the name is not a ticket's. */
export function ticketSeat(
  ticket: string,
): { n: number; pid: number; start: string; k: number; file: string } | undefined {
  const match = TICKET.exec(ticket);
  if (!match) return undefined;
  const [pid, start, k] = [Number(match[2]), match[3]!, Number(match[4])];
  return { n: Number(match[1]), pid, start, k, file: seatName(pid, start, k) };
}

/** Whether `ticket` is held in a seat of this process now. */
export function ownTicket(dir: string, ticket: string): OwnSeat | undefined {
  const seat = ticketSeat(ticket);
  if (!seat || seat.pid !== process.pid || seat.start !== OWN_START) return undefined;
  const mine = own.get(dir)?.[seat.k];
  return mine?.ticket === ticket ? mine : undefined;
}

/**
 * A seat's text: the bakery's state on a first line of fixed width, `<n, 15 digits> <choosing, 0 or 1>`, then the
 * ticket's content as JSON. A rewrite that changes only the content (a command's group) writes the same first line
 * again, byte for byte: a read that meets the write half done still finds the number whole, whatever it finds after.
 */
const text = ({ n, choosing, ...content }: SeatState) =>
  `${String(n).padStart(15, "0")} ${choosing ? 1 : 0}\n${JSON.stringify(content)}`;
const FIRST_LINE = /^(\d{15}) ([01])\n/;

/** A seat's state from its text; `whole` when its content parses too. */
function fromText(raw: string): { state: SeatState; whole: boolean } | undefined {
  const line = FIRST_LINE.exec(raw);
  if (!line) return undefined;
  let content: Partial<TicketContent> | undefined;
  try {
    content = JSON.parse(raw.slice(line[0].length)) as Partial<TicketContent>;
  } catch {}
  const groups = Array.isArray(content?.groups) ? content.groups : [];
  return { state: { ...content, n: Number(line[1]), choosing: line[2] === "1", groups }, whole: !!content };
}

/** Writes this process's seat `k` of `dir`, making its file the first time. Throws when it cannot be written. */
export function writeSeat(dir: string, k: number, state: SeatState): void {
  const seats = ownSeats(dir);
  const seat = (seats[k] ??= { made: false });
  const file = join(dir, seatName(process.pid, OWN_START, k));
  if (seat.made) {
    try {
      writeAtStart(file, (size) => Buffer.from(text(state).padEnd(size, " ")));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      seat.made = false;
    }
  }
  // An earlier process with this pid and start (none on Linux: the start differs) may have left it.
  removeQuietly(file);
  const fd = createExclusive(file);
  try {
    writeAll(fd, Buffer.from(text(state)));
  } finally {
    closeSync(fd);
  }
  seat.made = true;
}

/**
 * What the seat file says; "gone" when it is not there, undefined when its first line does not read (a seat being
 * made, or not a seat). Read again once when it does not read whole: its process may have been writing it.
 */
export function readSeat(file: string): SeatState | "gone" | undefined {
  for (let attempt = 0; ; attempt++) {
    let raw: string;
    try {
      raw = readNoFollow(file);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ENOENT" ? "gone" : undefined;
    }
    const read = fromText(raw);
    if (read?.whole || attempt > 0) return read?.state;
  }
}
