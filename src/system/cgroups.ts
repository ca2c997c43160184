/**
 * The kernel's control groups as a deploy's limits use them (docs/production.md "Limits"): where this process's own
 * group is, in the unified hierarchy (cgroup v2) or in one hierarchy per controller (v1); whether a controller can
 * really be used there; and a group of ours beside it (a deploy's, or an app's kept group), its limits written, its
 * processes listed, what the kernel did to it counted (memory kills, refused forks). What ends its processes or moves
 * them is cgroup-members.ts.
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

/** A group of ours: one directory (v2) or one per controller it limits (v1), made with its limits. */
export class DeployGroup {
  private constructor(
    readonly hierarchy: Hierarchy,
    readonly name: string,
    /** v1: the group's directory in the hierarchy of each controller it limits; v2: the one directory for all. */
    readonly byController: Partial<Record<Controller, string>>,
  ) {}

  /** Makes the group of deploy `id` with `limits`; throws with the reason when the kernel refuses. */
  static make(hierarchy: Hierarchy, id: string, limits: Limits): DeployGroup {
    return DeployGroup.at(hierarchy, `service-${process.pid}-${id.slice(0, 8)}`, limits);
  }

  /** The group `name` with `limits` written, made when it does not exist yet; throws when the kernel refuses. */
  static at(hierarchy: Hierarchy, name: string, limits: Limits): DeployGroup {
    const byController: Partial<Record<Controller, string>> = {};
    const at = (controller: Controller) => {
      const dir = join(hierarchy.version === 2 ? hierarchy.parent : hierarchy.parents[controller], name);
      mkdirSync(dir, { recursive: true });
      byController[controller] = dir;
      return dir;
    };
    if (hierarchy.version === 2) enableV2(hierarchy, limits);
    if (limits.memory !== undefined) {
      const dir = at("memory");
      const v2 = hierarchy.version === 2;
      // Swap too: over its memory a group is killed, not swapped out (absent without swap accounting). v1 wants
      // memory.limit_in_bytes <= memory.memsw.limit_in_bytes at every write: swap is lifted first, then set.
      const swap = join(dir, v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes");
      if (!v2 && existsSync(swap)) writeFileSync(swap, "-1");
      writeFileSync(join(dir, v2 ? "memory.max" : "memory.limit_in_bytes"), String(limits.memory));
      if (existsSync(swap)) writeFileSync(swap, v2 ? "0" : String(limits.memory));
    }
    if (limits.cpu !== undefined) {
      const dir = at("cpu");
      const quota = Math.round(limits.cpu * 100_000);
      if (hierarchy.version === 2) writeFileSync(join(dir, "cpu.max"), `${quota} 100000`);
      else {
        writeFileSync(join(dir, "cpu.cfs_period_us"), "100000");
        writeFileSync(join(dir, "cpu.cfs_quota_us"), String(quota));
      }
    }
    if (limits.tasks !== undefined) writeFileSync(join(at("pids"), "pids.max"), String(limits.tasks));
    return new DeployGroup(hierarchy, name, byController);
  }

  /** Its directories (one in v2). */
  get dirs(): string[] {
    return [...new Set(Object.values(this.byController))];
  }

  /** The files a process writes its pid to, to join the group (before it runs anything). */
  get procsFiles(): string[] {
    return this.dirs.map((dir) => join(dir, "cgroup.procs"));
  }

  /** What the kernel did to it so far: processes killed for memory, forks refused at its `tasks`. */
  counts(): { memory: number; tasks: number } {
    const v2 = this.hierarchy.version === 2;
    const memory = this.byController.memory;
    const pids = this.byController.pids;
    const oom = memory ? read(join(memory, v2 ? "memory.events" : "memory.oom_control")) : "";
    return {
      memory: Number(/^oom_kill (\d+)/m.exec(oom)?.[1] ?? 0),
      // pids.events: `max` counts the forks refused at the limit (v1 and v2 alike).
      tasks: pids ? Number(/^max (\d+)/m.exec(read(join(pids, "pids.events")))?.[1] ?? 0) : 0,
    };
  }

  /** The processes in it now. */
  members(): number[] {
    return [...new Set(this.dirs.flatMap((dir) => pidsIn(dir)))];
  }

  /** Removes its directories (an empty group's; one that still holds a process stays). */
  remove(): void {
    for (const dir of this.dirs) {
      try {
        rmdirSync(dir);
      } catch {}
    }
  }
}

type Limits = { memory?: number; cpu?: number; tasks?: number };

export function pidsIn(dir: string): number[] {
  return read(join(dir, "cgroup.procs")).split("\n").filter(Boolean).map(Number);
}

/**
 * v2 lets a group give controllers to child groups only while it holds no process itself: the service moves into
 * its leaf first (once), then the controllers are enabled for the children.
 */
function enableV2(hierarchy: Extract<Hierarchy, { version: 2 }>, limits: Limits) {
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

/** The deploys' groups a process left in `parent`, with the pid of the process that made each. */
export function deployGroupsIn(parent: string): { dir: string; owner: number }[] {
  let names: string[] = [];
  try {
    names = readdirSync(parent);
  } catch {}
  return names.flatMap((name) => {
    const owner = Number(GROUP.exec(name)?.[1]);
    return owner ? [{ dir: join(parent, name), owner }] : [];
  });
}
