/**
 * Build slots (docs/deploy-control.md "Build slots"): at most `limit` deploys of one service directory do their work
 * at once, across every process deploying from it (the server, `service deploy`, `service rollback`).
 *
 * The slots are bakery tickets, as the queue's (tickets.ts), under `<cwd>/.service/slots/`: a deploy takes a ticket
 * when it asks for a slot, and holds one while its ticket is among the first `limit` live ones. Tickets only ever
 * leave the front, so slots go in the order they were asked for. A ticket names its holder's pid and start time:
 * the next process to look removes the ticket of one that died (a `kill -9`), and its slot is free again.
 */
import { join, resolve } from "node:path";
import { ensurePrivateDir } from "../system/files.ts";
import type { GroupRecorder } from "../system/groups.ts";
import { POLL_MS } from "./queue.ts";
import {
  dropTicket,
  readTicket,
  scanTickets,
  takeTicket,
  type TicketContent,
  ticketRecorder,
  updateTicket,
} from "./tickets.ts";

/** Where the slots of the service directory `cwd` live. */
export function slotDir(cwd: string): string {
  return join(resolve(cwd), ".service", "slots");
}

/** Who holds a slot: the deploy and its app (null in single-app mode). */
export interface SlotHolder {
  app: string | null;
  id: string;
}

/** The slots as they stand: how many are in use, the limit (0: none), their holders and how many wait. */
export interface SlotUse {
  inUse: number;
  limit: number;
  holders: SlotHolder[];
  waiting: (SlotHolder & { position: number })[];
}

/** The slots of `cwd` now, across processes; tickets of dead processes are removed on the way. */
export function readSlots(cwd: string, limit: number): SlotUse {
  const dir = slotDir(cwd);
  const scan = scanTickets(dir);
  const holders: SlotHolder[] = [];
  const waiting: SlotUse["waiting"] = [];
  for (const name of scan.live) {
    const content = readTicket(dir, name);
    const who = { app: content.app ?? null, id: content.id ?? "?" };
    if (content.holding) holders.push(who);
    else waiting.push({ ...who, position: waiting.length + 1 });
  }
  return { inUse: holders.length, limit, holders, waiting };
}

/** The slots in use as said (`2 of 2 in use: web, api`): the holders by app, or by short id in single-app mode. */
export function slotText(use: Pick<SlotUse, "inUse" | "limit" | "holders">): string {
  if (use.limit === 0) return "no limit";
  const names = use.holders.map((h) => h.app ?? h.id.slice(0, 8));
  return `${use.inUse} of ${use.limit} in use${names.length ? `: ${names.join(", ")}` : ""}`;
}

interface Waiter {
  ticket: string;
  content: TicketContent;
  limit: number;
  granted: () => void;
  /** Told the holders while it waits, on each look. */
  seen: (use: SlotUse) => void;
}

/**
 * This process's waiters, per slot directory, in ticket order: a slot freed here is handed over at once; one freed
 * by another process is found by a look every POLL_MS, as the queue does, and only while someone here waits.
 */
const lanes = new Map<string, { waiters: Waiter[]; timer?: ReturnType<typeof setTimeout> }>();

/**
 * A slot held: `release` frees it (once; again does nothing). `recorder` writes the process groups of the commands
 * that run in it into its ticket: a holder killed with -9 keeps the slot while what it started still runs.
 */
export interface Slot {
  release(): void;
  recorder?: GroupRecorder;
}

/**
 * Takes a slot of `cwd` for the deploy `who`. Resolves with it when its turn comes; `onWait` hears the slots in use
 * while it waits (at once, then on each look). `abort(end)` lets the caller end the wait (a cancel): it resolves
 * undefined then, and its ticket is gone. Throws when the slot directory cannot be written. `limit` 0: no slots, no
 * ticket, no wait.
 */
export function takeSlot(
  cwd: string,
  limit: number,
  who: { id: string; app?: string },
  hooks: { onWait: (use: SlotUse) => void; abort: (end: () => void) => void },
): Promise<Slot | undefined> {
  if (limit <= 0) return Promise.resolve({ release() {} });
  const dir = slotDir(cwd);
  ensurePrivateDir(dir);
  const content: TicketContent = { id: who.id, ...(who.app ? { app: who.app } : {}), groups: [] };
  const ticket = takeTicket(dir, content);
  let lane = lanes.get(dir);
  if (!lane) lanes.set(dir, (lane = { waiters: [] }));
  const laneRef = lane;
  return new Promise((resolvePromise) => {
    let released = false;
    const waiter: Waiter = {
      ticket,
      content,
      limit,
      seen: hooks.onWait,
      granted: () => {
        content.holding = true;
        updateTicket(dir, waiter.ticket, content);
        resolvePromise({
          release: () => {
            if (released) return;
            released = true;
            dropTicket(dir, waiter.ticket);
            look(dir);
          },
          recorder: ticketRecorder(dir, () => waiter.ticket, content),
        });
      },
    };
    laneRef.waiters.push(waiter);
    laneRef.waiters.sort((a, b) => (a.ticket < b.ticket ? -1 : 1));
    hooks.abort(() => {
      if (!laneRef.waiters.includes(waiter)) return;
      laneRef.waiters = laneRef.waiters.filter((w) => w !== waiter);
      dropTicket(dir, waiter.ticket);
      resolvePromise(undefined);
      look(dir);
    });
    look(dir);
  });
}

/** Hands a slot to each waiter of `dir` whose ticket is among the first `limit` live ones; looks again later if any waits. */
function look(dir: string): void {
  const lane = lanes.get(dir);
  if (!lane) return;
  clearTimeout(lane.timer);
  lane.timer = undefined;
  let scan = scanTickets(dir);
  const lost = lane.waiters.filter((w) => !scan.live.includes(w.ticket));
  if (lost.length > 0) {
    // Its ticket was removed (the directory cleaned by hand): it asks again, behind every live ticket.
    ensurePrivateDir(dir);
    for (const waiter of lost) waiter.ticket = takeTicket(dir, waiter.content);
    lane.waiters.sort((a, b) => (a.ticket < b.ticket ? -1 : 1));
    scan = scanTickets(dir);
  }
  if (!scan.choosing) {
    for (const waiter of [...lane.waiters]) {
      const index = scan.live.indexOf(waiter.ticket);
      if (index < 0 || index >= waiter.limit) continue;
      lane.waiters = lane.waiters.filter((w) => w !== waiter);
      waiter.granted();
    }
  }
  if (lane.waiters.length === 0) {
    lanes.delete(dir);
    return;
  }
  const cwd = resolve(dir, "..", "..");
  for (const waiter of lane.waiters) waiter.seen(readSlots(cwd, waiter.limit));
  lane.timer = setTimeout(() => look(dir), POLL_MS);
}
