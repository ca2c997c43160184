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

/**
 * Taken just before a group is killed: its members, and the processes of the same deploy outside it. A child
 * that calls setsid leaves the group and no signal to the group reaches it; its environment still names the
 * deploy, so it can at least be reported instead of claimed stopped.
 */
export function snapshot(pgid: number, deployId: string | undefined): StopReport {
  const all = processes();
  const marker = deployId ? `\0SERVICE_DEPLOY_ID=${deployId}\0` : undefined;
  const outside = all.filter((p) => {
    if (!marker || p.pgid === pgid || p.pid === process.pid) return false;
    try {
      return `\0${readFileSync(`/proc/${p.pid}/environ`, "latin1")}`.includes(marker);
    } catch {
      return false;
    }
  });
  const strip = ({ pid, command }: Proc) => ({ pid, command });
  return { pgid, members: all.filter((p) => p.pgid === pgid).map(strip), outside: outside.map(strip) };
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
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-group.pgid, name);
    } catch {}
  };
  signal("SIGTERM");
  if (await gone(group, graceMs)) return true;
  if (groupAlive(group)) signal("SIGKILL");
  return gone(group, 5000);
}
