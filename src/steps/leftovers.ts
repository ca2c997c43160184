/**
 * What a deploy's scripts left running, when the deploy ends (docs/production.md "Limits", `limits.leftovers`): after
 * an ok deploy it is kept, in one long-lived group per app capped by `limits.kept` (never unlimited); after a failed one
 * it is stopped; `move-out` moves it into the service's own group, without limits. What earlier deploys kept is in the
 * kept group already, and nothing here touches it.
 */
import { sha256Hex } from "../system/digest.ts";
import { basename } from "node:path";
import { formatBytes, KEPT_DEFAULT } from "../config/limits.ts";
import type { LimitsSettings } from "../config/limits.ts";
import { type Controller, DeployGroup, findHierarchy } from "../system/cgroups.ts";
import { killMembers, type Member, moveMembers } from "../system/cgroup-members.ts";

/** How many processes a line names before it counts the others. */
const LISTED = 10;

/**
 * The kept group of an app: `service-kept-<app>-<8 hex of its repository's path>`, the same for every process of the
 * service (server, `service deploy`) and across restarts; never taken for a dead deploy's group (cgroups.ts GROUP).
 */
export function keptGroupName(app: string | undefined, repoPath: string): string {
  const label = (app ?? basename(repoPath)).replace(/[^A-Za-z0-9_.-]+/g, "_").slice(0, 40) || "app";
  return `service-kept-${label}-${sha256Hex(repoPath).slice(0, 8)}`;
}

/** Ends `group` by `settings.leftovers`; the line that says what was done, undefined when nothing was left. */
export async function endLeftovers(
  group: DeployGroup,
  settings: LimitsSettings,
  ok: boolean,
  keptName: string,
): Promise<string | undefined> {
  if (group.members().length === 0) {
    group.remove();
    return undefined;
  }
  const mode = settings.leftovers ?? (ok ? "keep" : "kill");
  try {
    if (mode === "move-out") {
      const { moved, left } = moveMembers(group);
      return `left running, moved out of the deploy's limits into the service's own group: ${moved.map((m) => m.pid).join(", ")}${stillThere(left)}`;
    }
    if (mode === "keep") {
      const kept = keptLimits(settings);
      const into = keptGroup(kept, keptName);
      if (typeof into === "string")
        return `cannot keep what the deploy left running (${into}): stopped ${await stop(group)}`;
      const { moved, left } = moveMembers(group, into);
      return `kept what the deploy left running, in ${keptName} (limits.kept: ${describe(kept)}): ${listed(moved)}${stillThere(left)}`;
    }
    return `stopped what the ${ok ? "" : "failed "}deploy left running: ${await stop(group)}`;
  } finally {
    group.remove();
  }
}

/** `limits.kept`, or its default when it sets none of memory, cpu and tasks: never unlimited. */
function keptLimits(settings: LimitsSettings): { memory?: number; cpu?: number; tasks?: number } {
  const { memory, cpu, tasks } = settings.kept ?? {};
  return (memory ?? cpu ?? tasks) ? (settings.kept ?? {}) : KEPT_DEFAULT;
}

/** The app's kept group with `limits` written, made once; or why it cannot be. */
function keptGroup(limits: ReturnType<typeof keptLimits>, name: string): DeployGroup | string {
  const wanted: Controller[] = [];
  if (limits.memory !== undefined) wanted.push("memory");
  if (limits.cpu !== undefined) wanted.push("cpu");
  if (limits.tasks !== undefined) wanted.push("pids");
  const hierarchy = findHierarchy(wanted);
  if ("problem" in hierarchy) return hierarchy.problem.replace(/^limits: /, "limits.kept: ");
  try {
    return DeployGroup.at(hierarchy, name, limits);
  } catch (error) {
    // The kernel refuses a limit below what the group holds now (v1 memory), or the directory.
    return `limits.kept: the group ${name} cannot be made or limited: ${(error as Error).message}`;
  }
}

/** Stops what runs in the group; what it was, as said: `4250 (node)`. */
async function stop(group: DeployGroup): Promise<string> {
  const { stopped, left } = await killMembers(group);
  return `${listed(stopped)}${stillThere(left)}`;
}

/** `4250 (node), 4251 (sh)`, ascending; past ten, `… and 92 more (102 processes)`. */
function listed(members: Member[]): string {
  const sorted = [...members].sort((a, b) => a.pid - b.pid);
  const named = sorted.slice(0, LISTED).map((m) => `${m.pid} (${m.command})`);
  const more = sorted.length - named.length;
  return named.join(", ") + (more > 0 ? ` and ${more} more (${sorted.length} processes)` : "");
}

const stillThere = (left: number[]) =>
  left.length > 0 ? `; still running in the deploy's group: ${left.slice(0, LISTED).join(", ")}` : "";

const describe = (limits: { memory?: number; cpu?: number; tasks?: number }) =>
  [
    limits.memory !== undefined && `memory ${formatBytes(limits.memory)}`,
    limits.cpu !== undefined && `cpu ${limits.cpu}`,
    limits.tasks !== undefined && `tasks ${limits.tasks}`,
  ]
    .filter(Boolean)
    .join(", ");
