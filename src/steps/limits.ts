/**
 * A deploy's limits on the scripts it runs (docs/production.md "Limits"): its own cgroup for `memory`, `cpu` and
 * `tasks` (system/cgroups.ts), and the niceness and I/O class of `nice` and `ioNice`. Every script goes through one
 * spawn (system/process.ts `runProcess`), which asks `scriptLimits` for the limits of the script it starts
 * (script.ts sets them): the script's first act is to join the group and take its priority, before it runs anything,
 * so nothing it starts escapes them.
 */
import { formatBytes } from "../config/limits.ts";
import type { LimitsSettings } from "../config/limits.ts";
import { type Controller, DeployGroup, findHierarchy } from "../system/cgroups.ts";
import { removeDeadGroups } from "../system/cgroup-members.ts";
import type { ScriptLimits } from "../system/process.ts";
import { endLeftovers, keptGroupName } from "./leftovers.ts";

/** The controllers `limits` needs; none for `nice` and `ioNice` alone. */
export function controllersOf(limits: Pick<LimitsSettings, "memory" | "cpu" | "tasks"> | undefined): Controller[] {
  if (!limits) return [];
  return [
    ...(limits.memory !== undefined ? (["memory"] as const) : []),
    ...(limits.cpu !== undefined ? (["cpu"] as const) : []),
    ...(limits.tasks !== undefined ? (["pids"] as const) : []),
  ];
}

/** Why `limits` cannot be enforced by this process, or undefined when they can (`service check`, the start). */
export function limitsProblem(limits: LimitsSettings | undefined): string | undefined {
  const wanted = controllersOf(limits);
  if (wanted.length === 0) return undefined;
  const found = findHierarchy(wanted);
  return "problem" in found ? found.problem : undefined;
}

/**
 * `limits` as one line: `memory 2G, cpu 1.5, tasks 512, nice 10, ioNice idle, leftovers kill, kept (tasks 64)`; empty
 * without any.
 */
export function describeLimits(limits: LimitsSettings | undefined): string {
  const { memory, cpu, tasks, nice, ioNice, leftovers, kept } = limits ?? {};
  return [
    memory !== undefined && `memory ${formatBytes(memory)}`,
    cpu !== undefined && `cpu ${cpu}`,
    tasks !== undefined && `tasks ${tasks}`,
    nice !== undefined && `nice ${nice}`,
    ioNice !== undefined && `ioNice ${ioNice}`,
    leftovers !== undefined && `leftovers ${leftovers}`,
    kept !== undefined && `kept (${describeLimits(kept)})`,
  ]
    .filter(Boolean)
    .join(", ");
}

/** The groups of deploys whose process died, in the hierarchies `limits` use: removed (cgroups.ts). */
export async function removeGroupsLeft(limits: LimitsSettings[]): Promise<string[]> {
  const removed: string[] = [];
  for (const settings of limits) {
    const hierarchy = findHierarchy(controllersOf(settings));
    if (!("problem" in hierarchy)) removed.push(...(await removeDeadGroups(hierarchy)));
  }
  return removed;
}

export class DeployLimits implements ScriptLimits {
  private constructor(
    readonly settings: LimitsSettings,
    private readonly group: DeployGroup | undefined,
    private readonly keptName: string,
  ) {}

  /**
   * The limits of deploy `id`: its group made (and the groups a dead process left removed first), or why the
   * limits cannot be enforced: then nothing may run, never silently unlimited. `of` names the app's kept group.
   */
  static async open(
    settings: LimitsSettings,
    id: string,
    of: { app: string | undefined; repoPath: string },
  ): Promise<DeployLimits | { problem: string }> {
    const keptName = keptGroupName(of.app, of.repoPath);
    const wanted = controllersOf(settings);
    if (wanted.length === 0) return new DeployLimits(settings, undefined, keptName);
    const hierarchy = findHierarchy(wanted);
    if ("problem" in hierarchy) return hierarchy;
    try {
      await removeDeadGroups(hierarchy);
      return new DeployLimits(settings, DeployGroup.make(hierarchy, id, settings), keptName);
    } catch (error) {
      return { problem: `limits: the deploy's cgroup cannot be made: ${(error as Error).message}` };
    }
  }

  /** `argv` started so that it joins the group and takes its priority first. */
  wrap(argv: string[]): string[] {
    const { nice, ioNice } = this.settings;
    const steps = ['while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift'];
    if (nice !== undefined) steps.push(`renice -n ${nice} -p $$ >/dev/null || exit 125`);
    if (ioNice !== undefined) {
      const [kind, level] = ioNice.split(":");
      steps.push(`ionice ${kind === "idle" ? "-c 3" : `-c 2${level ? ` -n ${level}` : ""}`} -p $$ || exit 125`);
    }
    steps.push('exec "$@"');
    return ["/bin/sh", "-c", steps.join("; "), "sh", ...(this.group?.procsFiles ?? []), "--", ...argv];
  }

  /** What the kernel did to the deploy's processes so far: memory kills, forks refused at `tasks`. */
  counts(): { memory: number; tasks: number } {
    return this.group?.counts() ?? { memory: 0, tasks: 0 };
  }

  /** Whether a fork can be refused at `tasks` (the spawn then watches for it). */
  get tasks(): number | undefined {
    return this.group ? this.settings.tasks : undefined;
  }

  /** The memory limit as said: `2G`. */
  get memoryText(): string {
    return this.settings.memory === undefined ? "" : formatBytes(this.settings.memory);
  }

  /** The limits, one line. */
  describe(): string {
    return describeLimits(this.settings);
  }

  /**
   * Ends the deploy's group: what its scripts left running is kept, stopped or moved out (leftovers.ts, by
   * `limits.leftovers` and whether the deploy was `ok`). The line that says what was done, if anything was left.
   */
  async end(ok: boolean): Promise<string | undefined> {
    if (!this.group) return undefined;
    try {
      return await endLeftovers(this.group, this.settings, ok, this.keptName);
    } catch (error) {
      return `what the deploy left running could not be ended: ${(error as Error).message}`;
    }
  }
}
