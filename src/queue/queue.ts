import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { deployGroups } from "../system/groups.ts";
import { defaultLogger, type Logger } from "../system/logger.ts";
import { recoverOrphan } from "./recovery.ts";
import {
  dropTicket,
  makeTicketDir,
  scanTickets,
  takeTicket,
  ticketDir,
  type TicketContent,
  ticketRecorder,
} from "./tickets.ts";

/** How often a waiter looks at the other processes' tickets (same-process hand-overs are immediate). */
export const POLL_MS = 100;

interface Entry {
  ticket: string;
  content: TicketContent;
  started: boolean;
  /** True while the entry must not start even at the head of the queue (its deploys are paused). */
  held: () => boolean;
  start: () => void;
  /** Ends a deploy that never started: cancelled (shutdown) or refused (its repository is gone). */
  end: (how: "cancel" | "refuse", reason: string) => void;
}

/** Refused because the repository's queue is full. */
export class QueueFullError extends Error {
  override name = "QueueFullError";
}

const byTicket = (a: Entry, b: Entry) => (a.ticket < b.ticket ? -1 : a.ticket > b.ticket ? 1 : 0);

/**
 * Deploys of one repoPath run one at a time in ticket order, across processes (tickets.ts). In this process
 * a lane per repoPath holds its deploys in the same ticket order, hands the turn over at once when one ends,
 * and polls only while another process holds the repository.
 */
export class DeployQueue {
  private readonly lanes = new Map<string, { dir: string; entries: Entry[]; timer?: ReturnType<typeof setTimeout> }>();

  /** `logger` hears about the process groups a dead deploy left running, and their stop. */
  constructor(private readonly logger: Logger = defaultLogger()) {}

  /** Deploys waiting (not running) for this key in this process. */
  waiting(key: string): number {
    return this.lanes.get(key)?.entries.filter((e) => !e.started).length ?? 0;
  }

  /**
   * Runs `task` when its turn comes. `onQueued(position)` is called once, at once, when it has to wait
   * (1 = next). `onCancel(reason)` replaces the task when the queue is cancelled before its turn, `onRefused`
   * when the repository is removed while it waits. Throws QueueFullError, and runs nothing, when `limit`
   * deploys already wait for this key in this process. `deploy` names the deploy in its ticket, so a process
   * that finds it interrupted can mark its log.
   */
  run<T>(
    key: string,
    task: () => Promise<T>,
    hooks: {
      limit?: number;
      deploy?: { id: string; logs: string };
      onQueued?: (position: number) => void;
      /** Asked when its turn comes after a wait: while true, it keeps waiting (see pause.ts). */
      held?: () => boolean;
      onCancel: (reason: string) => Promise<T>;
      onRefused: (reason: string) => Promise<T>;
    },
  ): Promise<T> {
    let lane = this.lanes.get(key);
    if (lane && this.waiting(key) >= (hooks.limit ?? Infinity)) {
      throw new QueueFullError(`${this.waiting(key)} deploys are already waiting for ${key}`);
    }
    const dir = lane?.dir ?? ticketDir(key);
    makeTicketDir(dir);
    const content: TicketContent = { ...hooks.deploy, groups: [] };
    const ticket = takeTicket(dir, content);
    if (!lane) this.lanes.set(key, (lane = { dir, entries: [] }));
    const laneRef = lane;
    return new Promise<T>((resolvePromise, reject) => {
      const entry: Entry = {
        ticket,
        content,
        started: false,
        held: () => false,
        start: () => {
          entry.started = true;
          // The ticket names the group of each command while it runs (see recovery.ts).
          const recorder = ticketRecorder(laneRef.dir, () => entry.ticket, entry.content);
          deployGroups
            .run(recorder, task)
            .then(resolvePromise, reject)
            .finally(() => this.release(key, [entry]));
        },
        end: (how, reason) =>
          (how === "cancel" ? hooks.onCancel(reason) : hooks.onRefused(reason)).then(resolvePromise, reject),
      };
      laneRef.entries.push(entry);
      laneRef.entries.sort(byTicket);
      const position = this.startReady(key);
      if (entry.started) return;
      hooks.onQueued?.(Math.max(1, position.get(entry) ?? 1));
      // Only a deploy that waited is held: one that found the queue free was allowed when it was asked for.
      if (hooks.held) entry.held = hooks.held;
    });
  }

  /** Ends every deploy that has not started yet with `reason`; running ones go on. */
  cancelWaiting(reason: string): void {
    for (const [key, lane] of this.lanes) this.endWaiting(key, lane.entries, "cancel", reason);
  }

  /** Ends the waiting deploy `id` with `reason`; false when it does not wait in this process (started, or not here). */
  cancelOne(id: string, reason: string): boolean {
    for (const [key, lane] of this.lanes) {
      const entry = lane.entries.find((e) => e.content.id === id && !e.started);
      if (!entry) continue;
      this.endWaiting(key, [entry], "cancel", reason);
      return true;
    }
    return false;
  }

  /** Takes entries that have not started out of the queue, then ends each with `reason`. */
  private endWaiting(key: string, entries: Entry[], how: "cancel" | "refuse", reason: string): void {
    const ending = entries.filter((e) => !e.started);
    for (const entry of ending) entry.started = true;
    this.release(key, ending);
    for (const entry of ending) entry.end(how, reason);
  }

  private release(key: string, done: Entry[]): void {
    const lane = this.lanes.get(key);
    if (!lane || done.length === 0) return;
    for (const entry of done) dropTicket(lane.dir, entry.ticket);
    lane.entries = lane.entries.filter((e) => !done.includes(e));
    if (lane.entries.length === 0) {
      clearTimeout(lane.timer);
      this.lanes.delete(key);
    } else this.startReady(key);
  }

  /** Starts this lane's first entry when its ticket is first in the queue; returns each entry's position. */
  private startReady(key: string): Map<Entry, number> {
    const lane = this.lanes.get(key);
    const positions = new Map<Entry, number>();
    if (!lane) return positions;
    clearTimeout(lane.timer);
    lane.timer = undefined;
    let scan = scanTickets(lane.dir);
    const lost = lane.entries.filter((e) => !e.started && !scan.live.includes(e.ticket));
    if (lost.length > 0) {
      const gitDir = dirname(lane.dir);
      if (scan.missing && !existsSync(gitDir)) {
        // The repository was removed: recreating its directories would leave a skeleton a re-clone trips on.
        this.endWaiting(
          key,
          lost,
          "refuse",
          `the repository ${key} was removed while this deploy waited (${gitDir} no longer exists)`,
        );
        return positions;
      }
      // Its ticket was removed (the queue directory cleaned by hand): queue again, behind every live ticket.
      try {
        makeTicketDir(lane.dir);
        for (const entry of lost) entry.ticket = takeTicket(lane.dir, entry.content);
      } catch (error) {
        this.endWaiting(
          key,
          lost,
          "refuse",
          `its queue ticket was removed and cannot be taken again: ${(error as Error).message}`,
        );
        return positions;
      }
      lane.entries.sort(byTicket);
      scan = scanTickets(lane.dir);
    }
    for (const entry of lane.entries) positions.set(entry, scan.live.indexOf(entry.ticket));
    for (const orphan of scan.orphans)
      void recoverOrphan(key, lane.dir, orphan, this.logger).then(
        () => this.lanes.get(key) === lane && this.startReady(key),
      );
    const head = lane.entries[0];
    if (!head || head.started) return positions;
    if (!scan.choosing && scan.live[0] === head.ticket && !head.held()) head.start();
    else lane.timer = setTimeout(() => this.startReady(key), POLL_MS);
    return positions;
  }
}
