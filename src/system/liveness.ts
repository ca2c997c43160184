import { readFileSync } from "node:fs";

/**
 * Whether the process that wrote a queue ticket or a deploy record still runs. A pid alone is not enough: pids
 * are reused, and a service restarted in a container is often pid 1 every time. So each writer also records its
 * start time (clock ticks since boot, `/proc/<pid>/stat` field 22), and a process counts as the same one only
 * when both match.
 */

/** The fields of `/proc/<pid>/stat` after the command name (state first), or undefined without the process or `/proc`. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** The start time of a process, or undefined when it does not exist or the system has no `/proc`. */
export function processStart(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

/**
 * True for a process that has ended but was not reaped yet (state Z, or X): a service killed -9 and restarted at
 * once is one until its parent waits for it, with its pid and start time still in /proc, yet it runs nothing.
 */
function ended(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state === "Z" || state === "X";
}

/** This process's start time ("0" without `/proc`). */
export const OWN_START = processStart(process.pid) ?? "0";

/**
 * Whether the process named by `pid` (and `start`, when the writer recorded it) still runs. On Linux a recorded
 * start time must match; elsewhere, or for a record without one, a signal-0 probe decides. A zombie is dead.
 */
export function processAlive(pid: number, start?: string): boolean {
  // This process, without a look at /proc (the queue asks for its own tickets on every turn).
  if (pid === process.pid && (start === undefined || start === OWN_START)) return true;
  if (start !== undefined && start !== "0" && process.platform === "linux")
    return processStart(pid) === start && !ended(pid);
  try {
    process.kill(pid, 0);
    return !ended(pid);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
