/**
 * What runs in a group of ours when it ends (docs/production.md "Limits"): moved into another group (an app's kept
 * group) or out into the service's own, or stopped; and the deploys' groups a dead process left, stopped and removed.
 * Each bounded: a group that keeps forking faster than it is emptied is left as it is, and said.
 */
import { existsSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Controller, type DeployGroup, deployGroupsIn, type Hierarchy, pidsIn } from "./cgroups.ts";
import { processAlive } from "./liveness.ts";

/** A process as said: its pid and its command's name. */
export interface Member {
  pid: number;
  command: string;
}

/** The command name of `pid` (`/proc/<pid>/comm`), `?` once it is gone. */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim() || "?";
  } catch {
    return "?";
  }
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
/** How many times a group is looked at again while it is emptied: a fork loop may add to it meanwhile. */
const ROUNDS = 200;

/**
 * Moves every process of `group` into `into` (an app's kept group), or, without it, out into the service's own group
 * (v1: the parent in each hierarchy; v2: the service's leaf). In v1 a process leaves the group's hierarchies that
 * `into` does not limit for their parent, and joins `into` in the others. Returns the processes moved; `left` what
 * still was in the group after every round.
 */
export function moveMembers(group: DeployGroup, into?: DeployGroup): { moved: Member[]; left: number[] } {
  const { hierarchy } = group;
  const targets: string[] = [];
  if (hierarchy.version === 2) targets.push(into ? into.dirs[0]! : hierarchy.leaf);
  else {
    const controllers = new Set([...Object.keys(group.byController), ...Object.keys(into?.byController ?? {})]);
    // Into the kept group first: a process that forks meanwhile forks under its limits.
    for (const controller of [...controllers] as Controller[]) {
      const dir = into?.byController[controller];
      if (dir) targets.unshift(dir);
      else targets.push(join(group.byController[controller]!, ".."));
    }
  }
  const moved = new Map<number, string>();
  let left = group.members();
  for (let round = 0; round < ROUNDS && left.length > 0; round++) {
    for (const pid of left) {
      if (!moved.has(pid)) moved.set(pid, commandOf(pid));
      for (const target of targets) {
        try {
          writeFileSync(join(target, "cgroup.procs"), String(pid));
        } catch {}
      }
    }
    left = group.members();
  }
  return { moved: [...moved].map(([pid, command]) => ({ pid, command })), left };
}

/**
 * Stops every process of `group` (SIGKILL: what a failed deploy left has no claim to a grace; v2's `cgroup.kill`
 * where the kernel has it, else each process, again until none is left). Returns the processes stopped, and `left`
 * those still there after `graceMs`.
 */
export async function killMembers(group: DeployGroup, graceMs = 5000): Promise<{ stopped: Member[]; left: number[] }> {
  const seen = new Map<number, string>();
  const deadline = Date.now() + graceMs;
  let left = group.members();
  for (let round = 0; left.length > 0 && Date.now() < deadline; round++) {
    for (const pid of left) if (!seen.has(pid)) seen.set(pid, commandOf(pid));
    const killFile = group.hierarchy.version === 2 ? join(group.dirs[0]!, "cgroup.kill") : "";
    if (killFile && existsSync(killFile)) writeFileSync(killFile, "1");
    else
      for (const pid of left) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
    // A killed process leaves the group once the kernel has ended it: look again shortly.
    await sleep(round < 10 ? 5 : 20);
    left = group.members();
  }
  return { stopped: [...seen].map(([pid, command]) => ({ pid, command })), left };
}

/**
 * The groups a dead process left (a crash, kill -9 of the server or of `service deploy`): what still runs in them is
 * killed, then they are removed. An app's kept group is never one of them. Bounded: a group that does not empty within
 * `graceMs` is left for the next look. Returns the groups removed.
 */
export async function removeDeadGroups(hierarchy: Hierarchy, graceMs = 2000): Promise<string[]> {
  const parents = hierarchy.version === 2 ? [hierarchy.parent] : [...new Set(Object.values(hierarchy.parents))];
  const removed: string[] = [];
  for (const parent of parents) {
    for (const { dir, owner } of deployGroupsIn(parent)) {
      if (owner === process.pid || processAlive(owner)) continue;
      const deadline = Date.now() + graceMs;
      for (let left = pidsIn(dir); left.length > 0 && Date.now() < deadline; left = pidsIn(dir)) {
        for (const pid of left) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {}
        }
        await sleep(20);
      }
      try {
        rmdirSync(dir);
        removed.push(dir);
      } catch {}
    }
  }
  return removed;
}
