import { AsyncLocalStorage } from "node:async_hooks";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { processStart } from "./liveness.ts";

/**
 * The process groups of a deploy. Every command of a deploy runs in a group of its own (pgid = the leader's
 * pid), so a deploy whose own process died (kill -9, an out-of-memory kill) can leave a group running. The
 * group is named with its leader's start time, so a pgid reused later by an unrelated process is never taken
 * for the deploy's.
 */
export interface Group {
  pgid: number;
  /** The leader's start time (see liveness.ts); "0" without /proc. */
  start: string;
}

/** Told when a command of the current deploy starts and ends, to keep the deploy's queue ticket current. */
export interface GroupRecorder {
  started(group: Group): void;
  ended(pgid: number): void;
}

/** The recorder of the deploy running in the current async context (the queue sets it around each deploy). */
export const deployGroups = new AsyncLocalStorage<GroupRecorder>();

/** A group as recorded when its leader just started. */
export function groupOf(pid: number): Group {
  return { pgid: pid, start: processStart(pid) ?? "0" };
}

/**
 * Whether the recorded group still has processes. While any member lives the kernel does not hand its id out
 * again, so a leader with another start time means the group is gone. Zombies do not count: a container's
 * init may never reap them. Without /proc, a signal 0 to the group decides.
 */
export function groupAlive(group: Group): boolean {
  const leaderStart = processStart(group.pgid);
  if (leaderStart !== undefined && group.start !== "0" && leaderStart !== group.start) return false;
  if (HAS_PROC) return groupMembers(group.pgid).length > 0;
  try {
    process.kill(-group.pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const HAS_PROC = existsSync("/proc/self/stat");

interface Proc {
  pid: number;
  pgid: number;
  command: string;
}

/** Every live (not zombie) process, from /proc; empty without it. */
function processes(): Proc[] {
  const found: Proc[] = [];
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return found;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z")
        found.push({
          pid: Number(pid),
          pgid: Number(fields[2]),
          command: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
        });
    } catch {}
  }
  return found;
}

/** The live processes of a group, with their command names. */
export function groupMembers(pgid: number): { pid: number; command: string }[] {
  return processes().filter((p) => p.pgid === pgid);
}

/** What a timeout stops: the group's processes, and the deploy's processes it cannot reach (see `snapshot`). */
export interface StopReport {
  pgid: number;
  members: { pid: number; command: string }[];
  /** Processes started by the deploy (they carry its SERVICE_DEPLOY_ID) that left the group: setsid, daemons. */
  outside: { pid: number; command: string }[];
}

/** Whether the environment of `pid` holds every `NAME=value` of `markers` (false for none, or once it is gone). */
function carries(pid: number, markers: string[]): boolean {
  if (markers.length === 0) return false;
  try {
    const environ = `\0${readFileSync(`/proc/${pid}/environ`, "latin1")}`;
    return markers.every((marker) => environ.includes(`\0${marker}\0`));
  } catch {
    return false;
  }
}

/**
 * Taken just before a group is killed: its members, and the processes outside it whose environment carries
 * every one of `markers` (`SERVICE_DEPLOY_ID=<id>`: the same deploy's). A child that calls setsid leaves the
 * group and no signal to the group reaches it; its environment still names the deploy, so it can at least be
 * reported instead of claimed stopped.
 */
export function snapshot(pgid: number, markers: string[]): StopReport {
  const all = processes();
  const outside = all.filter((p) => p.pgid !== pgid && p.pid !== process.pid && carries(p.pid, markers));
  const strip = ({ pid, command }: Proc) => ({ pid, command });
  return { pgid, members: all.filter((p) => p.pgid === pgid).map(strip), outside: outside.map(strip) };
}

/**
 * Stops everything a command that must leave nothing behind (a health check) left running once it exited: its
 * group's processes and those carrying all of `markers` anywhere. Looked for again on every round, because a
 * child may be leaving the group (setsid) or forking while it is stopped. SIGTERM, then SIGKILL after
 * `graceMs`. Returns everything it found, and whether all of it is gone; undefined when nothing was left.
 */
export async function stopLeftovers(
  pgid: number,
  markers: string[],
  graceMs: number,
): Promise<(StopReport & { stopped: boolean }) | undefined> {
  const seen = { members: new Map<number, string>(), outside: new Map<number, string>() };
  const look = () => {
    const now = snapshot(pgid, markers);
    for (const p of now.members) seen.members.set(p.pid, p.command);
    for (const p of now.outside) if (!seen.members.has(p.pid)) seen.outside.set(p.pid, p.command);
    return now;
  };
  let now = look();
  const started = Date.now();
  while (now.members.length || now.outside.length) {
    const elapsed = Date.now() - started;
    if (elapsed > graceMs + 5000) break;
    const signal = elapsed < graceMs ? "SIGTERM" : "SIGKILL";
    // While the group has members its id cannot be handed out again; the others are checked by their markers.
    if (now.members.length) killGroup(pgid, signal);
    for (const p of now.outside) kill(p.pid, signal);
    await sleep(50);
    now = look();
  }
  if (seen.members.size === 0 && seen.outside.size === 0) return undefined;
  const list = (map: Map<number, string>) => [...map].map(([pid, command]) => ({ pid, command }));
  return {
    pgid,
    members: list(seen.members),
    outside: list(seen.outside),
    stopped: now.members.length === 0 && now.outside.length === 0,
  };
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  kill(-pgid, signal);
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {}
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Waits (bounded, polling) until the group has no process left; true when it is gone. */
async function gone(group: Group, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += 50) {
    if (!groupAlive(group)) return true;
    await sleep(50);
  }
  return !groupAlive(group);
}

/**
 * Stops a group left behind: SIGTERM, then SIGKILL after `graceMs`. Resolves true once it is gone (false only
 * when even SIGKILL did not end it within a few seconds: a process stuck in the kernel, or another user's).
 */
export async function stopGroup(group: Group, graceMs: number): Promise<boolean> {
  if (!groupAlive(group)) return true;
  killGroup(group.pgid, "SIGTERM");
  if (await gone(group, graceMs)) return true;
  if (groupAlive(group)) killGroup(group.pgid, "SIGKILL");
  return gone(group, 5000);
}
