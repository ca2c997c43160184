/**
 * The watch stage of a deploy (docs/watch.md), after the health check and outside the build slot: the watch itself
 * is watch/watch.ts (loaded only for an app that sets `watch`); a breach with `onBreach: rollback` takes back what
 * went live as a failed health check does (the rollback in place, the switch back with releases), in a build slot
 * again. The deploy's queue turn lasts until the watch ends: the next deploy of the repository waits for it.
 */
import { resolveWatch } from "../config/watch.ts";
import { short } from "../system/git.ts";
import type { WatchProgress } from "../watch-types.ts";
import type { DeployContext } from "../steps/context.ts";
import type { DeployState } from "../steps/state.ts";
import { isRollback } from "./frozen.ts";
import { inSlot } from "./slot.ts";
import type { PlannedDeploy } from "./types.ts";

/** Whether the deploy is watched: `watch` set, not a rollback, and what it deployed is live and healthy. */
export function watches(ctx: DeployContext, state: DeployState, options: PlannedDeploy): boolean {
  if (!ctx.config.watch || isRollback(options) || ctx.cancelled()) return false;
  if (state.error !== null || state.rolledBack || state.ok === false) return false;
  if (state.withReleases) return state.release?.live === true;
  return state.pulled.success && state.ran.exitCode === 0 && state.pulled.after !== null;
}

/** Runs the watch and what its end asks; fills `state.watch` (and on a breach, the rollback). */
export async function watchStage(
  ctx: DeployContext,
  state: DeployState,
  options: PlannedDeploy,
  run: { watching(progress: WatchProgress | undefined): void },
): Promise<void> {
  const settings = resolveWatch(ctx.config.watch!, ctx.processEnv);
  const say = (text: string) => ctx.run.step("watch", text);
  const { runWatch } = await import("../watch/watch.ts");
  const commit = state.release?.commit ?? state.pulled.after;
  const values = { commit, previousCommit: state.liveBefore ?? null, deployId: ctx.run.id, app: ctx.app ?? "" };
  const cwd = state.release?.live ? state.release.path : ctx.config.repoPath;
  state.watching = true;
  const ended = await runWatch(ctx, settings, {
    values,
    cwd,
    ...(options.stopping ? { stopping: options.stopping } : {}),
    progress: (progress) => run.watching(progress),
  }).finally(() => {
    state.watching = false;
    run.watching(undefined);
  });
  state.watch = ended.result;
  if (!ended.breach) return;
  const live = commit ? short(commit) : "what was deployed";
  if (settings.onBreach === "notify") {
    say(`breach: ${ended.breach}; not rolled back (onBreach: notify): ${live} stays live`);
    return;
  }
  state.error = `watch breached: ${ended.breach}`;
  if (!state.undo) {
    say(`breach: ${ended.breach}; there is nothing to roll back to: ${live} stays live`);
    return;
  }
  const undo = state.undo;
  const release = await inSlot(ctx, ctx.run.id, () => undo());
  release();
  const back = state.rollback?.ok
    ? "rolled back"
    : state.rollback
      ? "the rollback failed"
      : `nothing was rolled back: ${live} stays live`;
  say(`breach: ${ended.breach}; ${back}`);
}
