/**
 * A deploy with releases (docs/releases.md "A deploy with releases"): pull in repoPath as always, prepare
 * `releases/<id>` (carrying the cache of the live one, carry.ts), build there, switch `current` in one rename, activate
 * and health-check, switch back when that fails; prune after the `[done]` line (state.prune). A rollback to a release still kept is an instant switch: no pull, no build. Loaded by
 * pipeline.ts only when `releases` is set.
 */
import { join } from "node:path";
import { type ResolvedReleases, resolveReleases } from "../config/releases.ts";
import { short } from "../system/git.ts";
import type { ReleaseResult, RollbackTarget } from "../types.ts";
import { releaseEnv } from "./activate.ts";
import { afterSwitch, type Release } from "./after-switch.ts";
import { carryRefused, carryStep } from "./carry.ts";
import { captures } from "../steps/capture.ts";
import {
  isDirectory,
  type KeptRelease,
  layoutOf,
  listReleases,
  liveReleaseId,
  readMeta,
  type ReleaseLayout,
  releasesPathProblem,
} from "./files.ts";
import { fullDisk, markComplete, prepareRelease } from "./prepare.ts";
import { pruneReleases, removeRelease } from "./prune.ts";
import { switchCurrent } from "./switch.ts";
import { recoverReleases } from "./recovery.ts";
import { reloadFromRepo } from "../steps/repo-config.ts";
import { describeFailure, scriptStep } from "../steps/script.ts";
import type { DeployState } from "../steps/state.ts";
import type { Asked, DeployContext } from "../steps/context.ts";
import { refusal } from "../verify/signatures.ts";
import { pullAndVerify, verifyCheckout } from "../verify/stage.ts";

/** The releases flow; fills `state` as it goes (see pipeline.ts). */
export async function releaseFlow(ctx: DeployContext, state: DeployState, options: Asked): Promise<void> {
  const { target } = options;
  const { config, run } = ctx;
  const say = (text: string) => run.step("release", text);
  const settings = resolveReleases(config.releases!, ctx.cwd);
  const layout = layoutOf(settings, ctx.cwd);
  // What is live is what `current` names, whatever happens to the clone.
  state.withReleases = true;
  // Before anything moves: a directory the releases cannot go in fails the deploy with the clone untouched.
  const problem = releasesPathProblem(settings, config.repoPath);
  if (problem) {
    say(`failed: ${problem}`);
    state.error = problem;
    return;
  }
  for (const line of await recoverReleases(layout, config.repoPath, ctx.env)) say(`cleaned up: ${line}`);
  const previous = liveRelease(layout);
  state.liveBefore = previous?.commit || null;
  // Pruning follows the deploy's `[done]` line, still in its queue turn (pipeline.ts): never a rollback, a switch
  // back or the next deploy's carry while a release is being removed, and the line never waits for it.
  state.prune = async () => {
    const protect = [liveReleaseId(layout), previous?.id, state.release?.id];
    const pruned = await pruneReleases(layout, settings.keep, protect, config.repoPath, ctx.env);
    return { pruned, keep: settings.keep };
  };
  const kept = target && keptFor(layout, target, previous);
  if (kept) await instantSwitch(ctx, state, layout, kept, previous);
  else await buildAndSwitch(ctx, state, layout, settings, previous, options);
}

/** Pull (or, for a rollback to a pruned release, reset), prepare, build, switch, activate. */
async function buildAndSwitch(
  ctx: DeployContext,
  state: DeployState,
  layout: ReleaseLayout,
  settings: ResolvedReleases,
  previous: Release | null,
  options: Asked,
): Promise<void> {
  const { target } = options;
  const { config, run } = ctx;
  const say = (text: string) => run.step("release", text);
  const stays = `current stays ${previous ? `release ${previous.id}` : "unset (no release yet)"}`;
  if (target)
    say(`no kept release of ${short(target.commit)}: building a new release of it (it was pruned, or never made)`);
  const verified = await pullAndVerify(ctx, state, options);
  const commit = state.pulled.after;
  if (state.error || !commit) {
    state.error ??= "the clone has no commit to prepare a release of";
    say(`nothing prepared: ${state.error}; ${stays}`);
    return;
  }
  if (!verified) return;
  reloadFromRepo(config, ctx.cwd, ctx.processEnv, run.step, ctx.app);
  const refused = await carryRefused(ctx, settings.carry, commit);
  if (refused) {
    state.error = refused;
    say(`failed: ${refused}; ${stays}`);
    return;
  }
  const what = { commit, deployId: run.id, app: ctx.app, repoPath: config.repoPath, env: ctx.env };
  const output = run.output("release", captures());
  const prepared = await prepareRelease(layout, settings.shared, what, say, output);
  if (typeof prepared === "string") {
    state.error = prepared;
    say(`failed: ${prepared}; ${stays}`);
    return;
  }
  const release: Release = { id: prepared.id, dir: prepared.dir, commit };
  state.release = resultOf(release, previous, true);
  if (settings.carry.length > 0) {
    const carried = await carryStep(ctx, settings.carry, previous, release.dir, options.noCarry, output);
    if (typeof carried === "string") {
      state.error = carried;
      await removeRelease(layout, release.id, config.repoPath, ctx.env);
      say(`failed: ${carried}: removed release ${release.id}; ${stays}`);
      return;
    }
    Object.assign(state.release, carried);
  }
  say(`building release ${release.id}: the run script in ${release.dir}`);
  const env = releaseEnv(ctx, layout, release);
  state.ran = await scriptStep(ctx, "run", run.output("run", state.runOut), { cwd: release.dir, env });
  let failed: string | undefined;
  const cancelled = ctx.cancelled();
  // A cancel stops the build's commands: it ended because it was cancelled, not because it failed.
  if (cancelled) failed = `build cancelled ${cancelled}`;
  else if (state.ran.exitCode !== 0) {
    state.error = describeFailure(state.ran);
    const full = fullDisk(release.dir);
    failed = `build failed (${[state.error ?? `exit code ${state.ran.exitCode}`, full].filter(Boolean).join("; ")})`;
  } else {
    try {
      markComplete(layout, prepared.meta);
      switchCurrent(layout, release.id);
    } catch (error) {
      state.error = `cannot switch to release ${release.id}: ${(error as Error).message}`;
      failed = state.error;
    }
  }
  if (failed) {
    await removeRelease(layout, release.id, config.repoPath, ctx.env);
    say(`${failed}: removed release ${release.id}; ${stays}`);
    return;
  }
  say(`switched current: ${previous ? previous.id : "(none)"} -> ${release.id}`);
  state.release.live = true;
  await afterSwitch(ctx, state, layout, release, previous);
}

/** A rollback to a release still kept: switch, activate, health-check; the clone and the run script untouched. */
async function instantSwitch(
  ctx: DeployContext,
  state: DeployState,
  layout: ReleaseLayout,
  kept: KeptRelease & { commit: string },
  previous: Release | null,
): Promise<void> {
  const { run, env } = ctx;
  const say = (text: string) => run.step("release", text);
  const release: Release = { id: kept.id, dir: kept.path, commit: kept.commit };
  say(
    `instant switch: release ${kept.id} (commit ${short(kept.commit)}${kept.deployId ? `, built by deploy ${kept.deployId}` : ""}) is kept: no pull, no build`,
  );
  // Recorded as a reset is: the live commits before and after (the clone is not touched), so commit statuses and
  // notifications name the commit that goes live.
  const before = previous?.commit || null;
  Object.assign(state.pulled, { success: true, before, after: kept.commit });
  run.step("pull", "no pull: an instant switch to a kept release");
  run.step("pull", `${before ? short(before) : "(none)"} -> ${short(kept.commit)}`);
  env.SERVICE_COMMIT_BEFORE = before ?? "";
  env.SERVICE_COMMIT = kept.commit;
  // Signed commits only, whichever way a commit goes live: the keys may have changed since it was built.
  state.verify = await verifyCheckout(ctx, kept.commit, "verify");
  if (state.verify && !state.verify.ok) {
    state.error = refusal(state.verify);
    state.ok = false;
    return;
  }
  state.release = resultOf(release, previous, false);
  if (previous?.id === kept.id) say(`release ${kept.id} is already live: activating it again`);
  else {
    try {
      switchCurrent(layout, kept.id);
    } catch (error) {
      state.error = `cannot switch to release ${kept.id}: ${(error as Error).message}`;
      say(`failed: ${state.error}`);
      state.ok = false;
      return;
    }
    say(`switched current: ${previous ? previous.id : "(none)"} -> ${kept.id}`);
  }
  state.release.live = true;
  await afterSwitch(ctx, state, layout, release, previous);
  state.ok = state.error === null;
}

/** The release `current` names, when it is one of the releases directory's. */
function liveRelease(layout: ReleaseLayout): Release | null {
  const id = liveReleaseId(layout);
  const dir = id === null ? undefined : join(layout.releases, id);
  if (id === null || !dir || !isDirectory(dir)) return null;
  return { id, dir, commit: readMeta(layout, id)?.commit ?? "" };
}

/**
 * The kept release a rollback or a ref names: the one given by its id, else the newest of its commit (its deploy's
 * first). The live one only when named by its id: a deploy of the commit already live builds it again, as a push
 * that changed nothing does (docs/releases.md "A deploy of the live commit").
 */
function keptFor(
  layout: ReleaseLayout,
  target: RollbackTarget,
  live: Release | null,
): (KeptRelease & { commit: string }) | undefined {
  const kept = listReleases(layout).filter((r): r is KeptRelease & { commit: string } => r.commit !== null);
  if (target.release) return kept.find((r) => r.id === target.release);
  if (live?.commit === target.commit) return undefined;
  const ofCommit = kept.filter((r) => r.commit === target.commit);
  return ofCommit.find((r) => r.deployId === target.deployId) ?? ofCommit[0];
}

function resultOf(release: Release, previous: Release | null, built: boolean): ReleaseResult {
  return {
    id: release.id,
    path: release.dir,
    commit: release.commit,
    previous: previous && { id: previous.id, commit: previous.commit || null },
    built,
    live: false,
  };
}
