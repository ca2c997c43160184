/**
 * What follows a switch of `current` (docs/releases.md "A deploy with releases"): the release activated and
 * health-checked, and `current` switched back to the one it replaced when that fails (or when a watch breaches).
 */
import { short } from "../system/git.ts";
import type { DeployState } from "../steps/state.ts";
import type { DeployContext } from "../steps/context.ts";
import { captures } from "../steps/capture.ts";
import { goLive, type WentLive } from "./activate.ts";
import type { ReleaseLayout } from "./files.ts";
import { switchCurrent } from "./switch.ts";

/** A release as the flow moves between them. */
export interface Release {
  id: string;
  dir: string;
  commit: string;
}

/** Activate and health-check the release just switched to; when that fails, switch back if asked to. */
export async function afterSwitch(
  ctx: DeployContext,
  state: DeployState,
  layout: ReleaseLayout,
  release: Release,
  previous: Release | null,
): Promise<void> {
  const went = await goLive(ctx, layout, release, "release", captures());
  if (went.activate) state.release!.activate = { exitCode: went.activate.exitCode, timedOut: went.activate.timedOut };
  state.healthCheck = went.healthCheck;
  // Live and healthy: a watch's breach switches back as a failed health check does (deploy/watched.ts).
  if (!went.error) {
    state.undo = () => switchBack(ctx, state, layout, release, previous);
    return;
  }
  state.error = went.error;
  if (ctx.config.rollbackOnFailure) await switchBack(ctx, state, layout, release, previous);
  else ctx.run.step("release", `release ${release.id} stays live though it failed (rollbackOnFailure is off)`);
}

/** docs/releases.md "A deploy with releases": `current` back to the release it replaced, activated and health-checked. */
async function switchBack(
  ctx: DeployContext,
  state: DeployState,
  layout: ReleaseLayout,
  from: Release,
  previous: Release | null,
): Promise<void> {
  const { run } = ctx;
  if (!previous || previous.id === from.id) {
    run.step("rollback", "skipped: there is no earlier release to switch back to");
    return;
  }
  const out = captures();
  const result = (went: WentLive) => ({
    to: previous.commit,
    from: from.commit,
    ok: went.error === null,
    exitCode: went.activate ? went.activate.exitCode : null,
    timedOut: went.activate?.timedOut ?? false,
    stdout: out.stdout.toString(),
    stderr: out.stderr.toString(),
    error: went.error,
    ...(went.healthCheck ? { healthCheck: went.healthCheck } : {}),
  });
  run.step(
    "rollback",
    `switching current back to release ${previous.id} (commit ${short(previous.commit)}): no build, no reset of the clone`,
  );
  try {
    switchCurrent(layout, previous.id);
  } catch (error) {
    const why = `cannot switch back: ${(error as Error).message}`;
    run.step("rollback", `failed: ${why}`);
    state.rollback = result({ error: why });
    return;
  }
  run.step("release", `switched current: ${from.id} -> ${previous.id}`);
  state.release!.live = false;
  state.switchedBack = true;
  state.rolledBack = true;
  const went = await goLive(ctx, layout, previous, "rollback", out);
  run.step("rollback", went.error ? "failed" : "succeeded");
  state.rollback = result(went);
}
