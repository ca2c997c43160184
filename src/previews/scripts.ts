/**
 * A preview's scripts run (docs/previews.md "The wall", "Life cycle"): each line of the run or teardown script in
 * the preview's directory, as `previews.user`, with the preview's environment only, each in a process group of its
 * own, recorded so that its teardown stops what it left running; and that stop.
 */
import { closeSync, openSync } from "node:fs";
import { scriptLines, planLine } from "../steps/script.ts";
import { deployGroups, groupAlive, type Group, snapshot, stopLeftovers } from "../system/groups.ts";
import { KILL_GRACE_MS, runProcess } from "../system/process.ts";
import { writeAll } from "../system/files.ts";
import { asUser } from "./user.ts";

/** Most bytes of output a build's log keeps. */
export const MAX_LOG_BYTES = 1024 * 1024;

export interface ScriptRun {
  ok: boolean;
  /** Why it failed, in a few words. */
  reason?: string;
  /** The process groups its lines ran in (what they left running stays in them). */
  groups: Group[];
}

/** Runs `script` line by line (stopping at the first failure), appending its output to `log`. */
export async function runScript(
  script: string,
  options: { dir: string; env: Record<string, string>; user?: string; timeoutMs: number; log: string },
): Promise<ScriptRun> {
  const groups: Group[] = [];
  const fd = openSync(options.log, "a", 0o600);
  let written = 0;
  const out = (data: Uint8Array) => {
    if (written >= MAX_LOG_BYTES) return;
    const part = data.subarray(0, MAX_LOG_BYTES - written);
    written += part.length;
    writeAll(fd, part);
  };
  const deadline = Date.now() + options.timeoutMs;
  try {
    for (const line of scriptLines(script)) {
      out(new TextEncoder().encode(`$ ${line}\n`));
      const recorder = { started: (group: Group) => groups.push(group), ended: () => {} };
      const exit = await deployGroups.run(recorder, () =>
        runProcess(asUser(options.user, planLine(line).argv), {
          cwd: options.dir,
          env: options.env,
          deadline,
          onOutput: (_stream, data) => out(data),
        }),
      );
      if (exit.exitCode === 0) continue;
      const reason = exit.timedOut
        ? `timed out after ${options.timeoutMs} ms`
        : (exit.error ?? `\`${line.slice(0, 80)}\` exited with ${exit.exitCode}`);
      out(new TextEncoder().encode(`[failed] ${reason}\n`));
      return { ok: false, reason, groups };
    }
    return { ok: true, groups };
  } finally {
    closeSync(fd);
  }
}

/** Whether anything of a preview still runs: one of its groups, or a process carrying its marker. */
export function stillRunning(groups: readonly Group[], marker: string): boolean {
  return groups.some(groupAlive) || snapshot(-1, [marker]).outside.length > 0;
}

/**
 * Stops everything a preview left running: each of its groups still alive, and every process that carries its
 * marker (one that left its group). True when nothing of it is left.
 */
export async function stopPreview(groups: readonly Group[], marker: string): Promise<boolean> {
  for (const group of groups.filter(groupAlive)) await stopLeftovers(group.pgid, [marker], KILL_GRACE_MS);
  // No group left: only the processes that carry the marker (a pgid of -1 is no process group's).
  await stopLeftovers(-1, [marker], KILL_GRACE_MS);
  return !stillRunning(groups, marker);
}
