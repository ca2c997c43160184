import { sha256Hex } from "../system/digest.ts";
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { createExclusive, parseReadingAgain, readNoFollow, writeAll, writeAtStart } from "../system/files.ts";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { groupAlive, type Group, type GroupRecorder } from "../system/groups.ts";
import { processAlive, OWN_START } from "../system/liveness.ts";

/**
 * The ticket files of one repository's deploy queue, shared by every process that deploys it.
 *
 * The order is Lamport's bakery, on files, and never the wall clock (a clock stepped back once made a later
 * arrival sort first and wedged the queue): a ticket's number is 1 + the largest number present, taken while
 * a `.choosing-<pid>-<start>` marker says so, and a waiter runs only when no other process is choosing and its
 * ticket is the smallest live one. A number taken while another is being chosen can be equal (the pid breaks
 * the tie), never smaller than a running deploy's: that one was the smallest when it started and could not
 * start while anyone chose.
 *
 * A ticket is `<number>-<pid>-<start>`; the pid and its start time tell whether its holder lives. Its content
 * names the deploy and, while a command of the deploy runs, that command's process group: a holder killed
 * mid-deploy leaves a ticket that still holds the queue while its group has processes (see recovery.ts).
 */

const TICKET = /^(\d{15})-(\d+)-(\d+)$/;
const CHOOSING = /^\.choosing-(\d+)-(\d+)$/;
const TEMP = /^\.tmp-(\d+)-(\d+)-/;

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

const owner = (pid: string | undefined, start: string | undefined) =>
  !!pid && !!start && processAlive(Number(pid), start);

function remove(file: string): void {
  try {
    unlinkSync(file);
  } catch {}
}

function list(dir: string): string[] | undefined {
  try {
    return readdirSync(dir);
  } catch {
    return undefined;
  }
}

/**
 * Takes a ticket behind every live one. Throws when the directory cannot be written (it is never created here). The
 * marker holds the ticket's content and becomes the ticket by a rename: two new names in the directory, not three
 * (each waits for the ext4 journal when the disk is busy). A scan still sees one or the other: the ticket appears as
 * the marker goes, and a scan lists the markers before the tickets.
 */
export function takeTicket(dir: string, content: TicketContent): string {
  const marker = join(dir, `.choosing-${process.pid}-${OWN_START}`);
  remove(marker);
  createNew(marker, JSON.stringify(content));
  try {
    let largest = 0;
    for (const name of readdirSync(dir)) {
      const match = TICKET.exec(name);
      if (match) largest = Math.max(largest, Number(match[1]));
    }
    const name = `${String(largest + 1).padStart(15, "0")}-${String(process.pid).padStart(10, "0")}-${OWN_START}`;
    renameSync(marker, join(dir, name));
    return name;
  } catch (error) {
    remove(marker);
    throw error;
  }
}

/**
 * Replaces a ticket's content in place, in one write at its start, padded with spaces to its length so far: the file
 * never shrinks, so no old byte outlives the new JSON, and no rename or truncation touches the directory (each costs
 * a journal commit on ext4, on every command of every deploy). A holder killed mid-write has written all of it or
 * none (one page, one write). A ticket gone stays gone: it is opened, never created.
 */
export function updateTicket(dir: string, name: string, content: TicketContent): void {
  try {
    writeAtStart(join(dir, name), (size) => Buffer.from(JSON.stringify(content).padEnd(size, " ")));
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

/** Creates `file`, which must not exist: never through a link planted at its name. */
function createNew(file: string, text: string): void {
  const fd = createExclusive(file);
  try {
    writeAll(fd, Buffer.from(text));
  } finally {
    closeSync(fd);
  }
}

export function dropTicket(dir: string, name: string): void {
  remove(join(dir, name));
}

export function readTicket(dir: string, name: string): TicketContent {
  try {
    // Read again once when it does not parse: a holder may have been writing it at that moment (updateTicket).
    const content = parseReadingAgain(() => readNoFollow(join(dir, name))) as TicketContent;
    return { ...content, groups: Array.isArray(content.groups) ? content.groups : [] };
  } catch {
    return { groups: [] };
  }
}

/** The queue as it stands. Tickets, markers and temp files of dead processes are removed on the way. */
export function scanTickets(dir: string): TicketScan {
  // Markers first, tickets after (bakery): a process not choosing now took its number after our ticket existed.
  const first = list(dir);
  if (!first) return { missing: true, choosing: false, live: [], orphans: [] };
  let choosing = false;
  for (const name of first) {
    const marker = CHOOSING.exec(name) ?? TEMP.exec(name);
    if (!marker) continue;
    const mine = Number(marker[1]) === process.pid && marker[2] === OWN_START;
    if (!owner(marker[1], marker[2])) remove(join(dir, name));
    else if (!mine && name.startsWith(".choosing-")) choosing = true;
  }
  const names = list(dir) ?? [];
  const live: string[] = [];
  const orphans: TicketScan["orphans"] = [];
  for (const name of names.sort()) {
    const match = TICKET.exec(name);
    if (!match) continue;
    if (owner(match[2], match[3])) {
      live.push(name);
      continue;
    }
    const content = readTicket(dir, name);
    if (content.groups.some(groupAlive)) {
      live.push(name);
      orphans.push({ name, content });
    } else remove(join(dir, name));
  }
  return { missing: false, choosing, live, orphans };
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
