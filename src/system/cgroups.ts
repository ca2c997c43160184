/**
 * The kernel's control groups as a deploy's limits use them (docs/production.md "Limits"): where this process's own
 * group is, in the unified hierarchy (cgroup v2) or in one hierarchy per controller (v1); whether a controller can
 * really be used there; and a deploy's own group beside it, its limits written, its processes listed, its
 * out-of-memory kills counted, removed at the end, and the groups a dead process left cleaned up.
 */
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { processAlive } from "./liveness.ts";

export type Controller = "memory" | "cpu" | "pids";

/** Where the deploy groups go: v2 one directory; v1 one per controller. */
export type Hierarchy =
  | { version: 2; parent: string; leaf: string }
  | { version: 1; parents: Record<Controller, string> };

/** The name of the leaf group a v2 service moves itself into, so that its own group may hold child groups. */
const LEAF = "service-main";
/** A deploy's group: the pid of the process that made it, and the deploy's id (8 characters). */
const GROUP = /^service-(\d+)-[0-9a-f-]{8}$/;

const read = (file: string) => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
};
const writable = (dir: string) => {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
};

/** The mount points of the cgroup hierarchies: the unified one, and each v1 controller's. */
function mounts(): { unified?: string; v1: Partial<Record<Controller, string>> } {
  const out: { unified?: string; v1: Partial<Record<Controller, string>> } = { v1: {} };
  for (const line of read("/proc/self/mountinfo").split("\n")) {
    const [before, after] = line.split(" - ");
    if (!before || !after) continue;
    const mountPoint = before.split(" ")[4]!;
    const [type, , superOptions = ""] = after.split(" ");
    if (type === "cgroup2") out.unified ??= mountPoint;
    else if (type === "cgroup")
      for (const option of superOptions.split(","))
        if (option === "memory" || option === "cpu" || option === "pids") out.v1[option] ??= mountPoint;
  }
  return out;
}

/** This process's group in each hierarchy (`/proc/self/cgroup`): `""` for the unified one, else by controller. */
function ownPaths(): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of read("/proc/self/cgroup").split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    if (match[1] === "") paths.set("", match[2]!);
    for (const name of match[1]!.split(",")) if (name) paths.set(name, match[2]!);
  }
  return paths;
}

/**
 * Where `wanted` controllers can really be used by this process: the unified hierarchy when it offers them all
 * (its own group's `cgroup.controllers`) and may be written, else the v1 hierarchies. Otherwise why not, and the fix.
 */
export function findHierarchy(wanted: Controller[]): Hierarchy | { problem: string } {
  const found = mounts();
  const own = ownPaths();
  if (found.unified && own.has("")) {
    let dir = join(found.unified, own.get("")!);
    // A service that moved itself into its leaf: the deploy groups go beside the leaf.
    if (dir.endsWith(`/${LEAF}`)) dir = dir.slice(0, -LEAF.length - 1);
    const offered = read(join(dir, "cgroup.controllers")).trim().split(/\s+/);
    if (wanted.every((c) => offered.includes(c)) && writable(dir))
      return { version: 2, parent: dir, leaf: join(dir, LEAF) };
  }
  const parents: Partial<Record<Controller, string>> = {};
  const missing: string[] = [];
  for (const controller of wanted) {
    const mount = found.v1[controller];
    const path = own.get(controller);
    const dir = mount && path !== undefined ? join(mount, path) : undefined;
    // The hierarchy's mount names the controller; the root group has no limit files of its own (pids.max).
    if (dir && existsSync(dir) && writable(dir)) parents[controller] = dir;
    else missing.push(controller);
  }
  if (missing.length === 0) return { version: 1, parents: parents as Record<Controller, string> };
  const where = found.unified
    ? `the unified hierarchy at ${found.unified} does not offer ${wanted.join(", ")} to this process's group, and `
    : "";
  return {
    problem:
      `limits: the kernel's cgroups cannot be used for ${missing.join(", ")} by this process (${where}no writable ` +
      `cgroup v1 hierarchy has ${missing.length > 1 ? "them" : "it"}): run the service as root, or under systemd with ` +
      "Delegate=yes (service systemd writes it); or remove memory, cpu and tasks from limits",
  };
}

/** A deploy's group: one directory (v2) or one per controller (v1), made with its limits. */
export class DeployGroup {
  private constructor(
    private readonly hierarchy: Hierarchy,
    readonly dirs: string[],
  ) {}

  /** Makes the group of deploy `id` with `limits`; throws with the reason when the kernel refuses. */
  static make(
    hierarchy: Hierarchy,
    id: string,
    limits: { memory?: number; cpu?: number; tasks?: number },
  ): DeployGroup {
    const name = `service-${process.pid}-${id.slice(0, 8)}`;
    if (hierarchy.version === 2) {
      enableV2(hierarchy, limits);
      const dir = join(hierarchy.parent, name);
      mkdirSync(dir, { recursive: true });
      if (limits.memory !== undefined) {
        writeFileSync(join(dir, "memory.max"), String(limits.memory));
        if (existsSync(join(dir, "memory.swap.max"))) writeFileSync(join(dir, "memory.swap.max"), "0");
      }
      if (limits.cpu !== undefined) writeFileSync(join(dir, "cpu.max"), `${Math.round(limits.cpu * 100_000)} 100000`);
      if (limits.tasks !== undefined) writeFileSync(join(dir, "pids.max"), String(limits.tasks));
      return new DeployGroup(hierarchy, [dir]);
    }
    const dirs: string[] = [];
    const at = (controller: Controller) => {
      const dir = join(hierarchy.parents[controller], name);
      mkdirSync(dir, { recursive: true });
      dirs.push(dir);
      return dir;
    };
    if (limits.memory !== undefined) {
      const dir = at("memory");
      writeFileSync(join(dir, "memory.limit_in_bytes"), String(limits.memory));
      // Swap too: a build over its memory is killed, not swapped out (absent when the kernel has no swap accounting).
      if (existsSync(join(dir, "memory.memsw.limit_in_bytes")))
        writeFileSync(join(dir, "memory.memsw.limit_in_bytes"), String(limits.memory));
    }
    if (limits.cpu !== undefined) {
      const dir = at("cpu");
      writeFileSync(join(dir, "cpu.cfs_period_us"), "100000");
      writeFileSync(join(dir, "cpu.cfs_quota_us"), String(Math.round(limits.cpu * 100_000)));
    }
    if (limits.tasks !== undefined) writeFileSync(join(at("pids"), "pids.max"), String(limits.tasks));
    return new DeployGroup(hierarchy, dirs);
  }

  /** The files a process writes its pid to, to join the group (before it runs anything). */
  get procsFiles(): string[] {
    return this.dirs.map((dir) => join(dir, "cgroup.procs"));
  }

  /** How many processes the kernel killed in it for memory, so far. */
  oomKills(): number {
    const dir =
      this.hierarchy.version === 2 ? this.dirs[0] : this.dirs.find((d) => existsSync(join(d, "memory.oom_control")));
    if (!dir) return 0;
    const text = read(join(dir, this.hierarchy.version === 2 ? "memory.events" : "memory.oom_control"));
    return Number(/oom_kill (\d+)/.exec(text)?.[1] ?? 0);
  }

  /** The processes in it now. */
  members(): number[] {
    return [...new Set(this.dirs.flatMap((dir) => pidsIn(dir)))];
  }

  /**
   * Removes the group. What still runs in it (a daemon a script left running on purpose) is moved out first, into
   * the service's own group: production never runs under a build's limits. Returns the pids moved.
   */
  close(): number[] {
    const moved = this.members();
    for (const dir of this.dirs) {
      const parent = this.hierarchy.version === 2 ? this.hierarchy.leaf : join(dir, "..");
      for (const pid of pidsIn(dir)) {
        try {
          writeFileSync(join(parent, "cgroup.procs"), String(pid));
        } catch {}
      }
      try {
        rmdirSync(dir);
      } catch {}
    }
    return moved;
  }
}

function pidsIn(dir: string): number[] {
  return read(join(dir, "cgroup.procs")).split("\n").filter(Boolean).map(Number);
}

/**
 * v2 lets a group give controllers to child groups only while it holds no process itself: the service moves into
 * its leaf first (once), then the controllers are enabled for the children.
 */
function enableV2(
  hierarchy: Extract<Hierarchy, { version: 2 }>,
  limits: { memory?: number; cpu?: number; tasks?: number },
) {
  mkdirSync(hierarchy.leaf, { recursive: true });
  for (const pid of pidsIn(hierarchy.parent)) writeFileSync(join(hierarchy.leaf, "cgroup.procs"), String(pid));
  const wanted = [
    limits.memory !== undefined && "memory",
    limits.cpu !== undefined && "cpu",
    limits.tasks !== undefined && "pids",
  ];
  const enabled = read(join(hierarchy.parent, "cgroup.subtree_control")).split(/\s+/);
  const more = wanted.filter((c): c is string => Boolean(c) && !enabled.includes(c as string));
  if (more.length) writeFileSync(join(hierarchy.parent, "cgroup.subtree_control"), more.map((c) => `+${c}`).join(" "));
}

/**
 * The groups a dead process left (a crash, kill -9 of the server or of `service deploy`): what still runs in them is
 * killed (v1 has no `cgroup.kill`: each process), then they are removed. Bounded: a group that does not empty within
 * `graceMs` is left for the next look. Returns the groups removed.
 */
export async function removeDeadGroups(hierarchy: Hierarchy, graceMs = 2000): Promise<string[]> {
  const parents = hierarchy.version === 2 ? [hierarchy.parent] : [...new Set(Object.values(hierarchy.parents))];
  const removed: string[] = [];
  for (const parent of parents) {
    let names: string[] = [];
    try {
      names = readdirSync(parent);
    } catch {}
    for (const name of names) {
      const owner = Number(GROUP.exec(name)?.[1]);
      if (!owner || owner === process.pid || processAlive(owner)) continue;
      const dir = join(parent, name);
      const deadline = Date.now() + graceMs;
      for (let left = pidsIn(dir); left.length > 0 && Date.now() < deadline; left = pidsIn(dir)) {
        for (const pid of left) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {}
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      try {
        rmdirSync(dir);
        removed.push(dir);
      } catch {}
    }
  }
  return removed;
}
