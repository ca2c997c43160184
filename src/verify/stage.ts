/**
 * The verify stage of a deploy: after the pull (or the reset of a rollback or a ref) the commit checked out must be
 * the one pushed (pushed.ts) and, with `allowedSigners`, carry a good signature (signatures.ts); a refused commit
 * does not stay checked out.
 */
import { resolve } from "node:path";
import { captures } from "../steps/capture.ts";
import type { Asked, DeployContext } from "../steps/context.ts";
import { type PullState, pullStep } from "../steps/pull.ts";
import { resetStep } from "../steps/reset.ts";
import type { DeployState } from "../steps/state.ts";
import { defaultRemote, gitFetch, gitResetHard, resolveCommit, short } from "../system/git.ts";
import type { Step, VerifyResult } from "../types.ts";
import { verifyPushStep } from "./pushed.ts";
import { refusal, verifyCommit, verifyTag } from "./signatures.ts";

/**
 * Checks the commit now checked out, saying the verdict as a `name` line; undefined when `allowedSigners` is not
 * set. A deploy of a tag checks the tag first (docs/security.md "Tags"). The file is read again each time: keys
 * rotate without a restart.
 */
export async function verifyCheckout(
  ctx: DeployContext,
  commit: string | null,
  name: Step,
  tag?: string,
): Promise<VerifyResult | undefined> {
  const { config, run } = ctx;
  if (!config.allowedSigners) return undefined;
  const file = resolve(ctx.cwd, config.allowedSigners);
  const tagged = tag && commit ? await verifyTagAt(ctx, file, tag, commit, name) : undefined;
  if (tagged?.ok) run.step(name, `tag ${tag} signed by ${tagged.signer}`);
  // A refused tag refuses the commit deployed, whatever its own signature.
  const result: VerifyResult =
    tagged && !tagged.ok
      ? { ...tagged, commit }
      : commit
        ? await verifyCommit(config.repoPath, commit, file, ctx.env)
        : { ok: false, commit: null, signer: null, reason: "there is no commit to check" };
  run.step(name, result.ok ? `${short(commit)} signed by ${result.signer}` : `${refusal(result)}; nothing runs`);
  return tag && tagged ? { ...result, tag: { name: tag, signer: tagged.ok ? tagged.signer : null } } : result;
}

/**
 * The tag a deploy names, as the repository has it once it matches the commit checked out: a tag resolved on the
 * remote may not be fetched yet, or be an older one of the same name; then it is fetched from the remote first.
 * A good tag must also point at that commit (the remote's tag may have moved since it was resolved).
 */
async function verifyTagAt(
  ctx: DeployContext,
  file: string,
  tag: string,
  commit: string,
  name: Step,
): Promise<VerifyResult> {
  const { config, env, run } = ctx;
  const ref = `refs/tags/${tag}`;
  const remote =
    (await resolveCommit(config.repoPath, ref, env)) === commit ? undefined : await defaultRemote(config.repoPath, env);
  if (remote) {
    run.step(name, `git fetch ${remote} ${ref}: the tag as the remote has it`);
    const deadline = Date.now() + config.runTimeoutMs;
    const onOutput = run.output(name, captures());
    const fetched = await gitFetch(config.repoPath, { env, deadline, onOutput }, [
      "--no-tags",
      "--",
      remote,
      `+${ref}:${ref}`,
    ]);
    if (fetched.exitCode !== 0) {
      const why = fetched.error ?? `exit code ${fetched.exitCode}`;
      return {
        ok: false,
        commit,
        signer: null,
        reason: `tag ${tag}: git fetch ${remote} ${ref} failed (${why}): it cannot be checked`,
      };
    }
  }
  const result = await verifyTag(config.repoPath, tag, file, env);
  if (!result.ok || result.commit === commit) return result;
  return {
    ...result,
    ok: false,
    signer: null,
    reason: `tag ${tag}: it points at ${short(result.commit)}, not at the commit deployed`,
  };
}

/**
 * The verify stage, after the pull (or the reset of a rollback): a refused commit does not stay checked out,
 * the clone goes back to the commit it had before, so nothing of it runs, now or at the next deploy's start.
 */
export async function verifyStep(
  ctx: DeployContext,
  state: PullState,
  tag?: string,
): Promise<VerifyResult | undefined> {
  const result = await verifyCheckout(ctx, state.after, "verify", tag);
  const { before } = state;
  if (!result || result.ok || !before || before === state.after) return result;
  const { config, run } = ctx;
  run.step("verify", `git reset --hard ${short(before)}: back to the commit from before`);
  const reset = await gitResetHard(config.repoPath, before, {
    env: ctx.env,
    deadline: Date.now() + config.runTimeoutMs,
    onOutput: run.output("verify", captures()),
  });
  if (reset.exitCode !== 0)
    run.step("verify", `failed: ${reset.error ?? `git reset --hard exited with ${reset.exitCode}`}`);
  return result;
}

/**
 * After the pull (or the reset of a rollback or a ref): HEAD must be what the forge said was pushed (pushed.ts),
 * and the commit must carry a good signature (docs/security.md "Signed commits"), both checked before the
 * repository's config is read. False when the deploy must go no further (a refused commit, a cancel).
 */
export async function pullAndVerify(ctx: DeployContext, state: DeployState, options: Asked): Promise<boolean> {
  const { target, pushed } = options;
  // A pull that failed still runs the script ("pulling → running, always"); a refusal does not.
  state.error = target ? await resetStep(ctx, state.pulled, target) : await pullStep(ctx, state.pulled, options.gated);
  // A pull whose outcome nothing may run on (a merge with a force-pushed branch, a conflict left in the tree).
  if (state.pulled.refused) return false;
  const refused = !state.error && pushed && !ctx.cancelled() && (await verifyPushStep(ctx, state.pulled, pushed));
  if (refused) {
    state.error = refused;
    return false;
  }
  state.verify = await verifyStep(ctx, state.pulled, target?.tag);
  if (state.verify && !state.verify.ok) {
    state.error ??= refusal(state.verify);
    return false;
  }
  return !ctx.cancelled();
}
