import { readDeployVariables } from "../config/env.ts";
import { loadDeployVariables, needsLoading } from "../steps/variables.ts";
import { liveCommitOf, liveOrCheckedOut } from "../history/live.ts";
import { committerDates } from "../history/lead.ts";
import { leadAfterDone, maintainAfterDone, pruneAfterDone } from "./after-done.ts";
import { defaultLogger } from "../system/logger.ts";
import { commitInfos } from "../system/commit-infos.ts";
import { short } from "../system/git.ts";
import { KILL_GRACE_MS } from "../system/process.ts";
import type { CommitInfo, DeployResult } from "../types.ts";
import { scriptEnv } from "../steps/env.ts";
import { healthStep } from "../steps/health.ts";
import { reloadFromRepo } from "../steps/repo-config.ts";
import { rollBack } from "./rollback.ts";
import { DeployRun } from "./run.ts";
import { inSlot } from "./slot.ts";
import { frozenNow, isRollback } from "./frozen.ts";
import { keepForCatchUp } from "./request.ts";
import { describeFailure, scriptStep } from "../steps/script.ts";
import { DeployState } from "../steps/state.ts";
import type { Asked, DeployContext } from "../steps/context.ts";
import type { PlannedDeploy } from "./types.ts";
import { pullAndVerify } from "../verify/stage.ts";
import { checkoutStep } from "../verify/pushed.ts";

/**
 * One deploy, start to end: its variables read and its checkout checked, then the plain flow (pull and run in
 * repoPath), or with `releases` the releases flow (releases/flow.ts, loaded only then). Never throws: whatever goes
 * wrong ends in the result, the `[done]` line and the log files.
 */
export async function runDeploy(options: PlannedDeploy): Promise<DeployResult> {
  // Read before the run starts: the values read from files are secrets its every line is redacted of. An
  // `envCommand` or an age-encrypted envFile is awaited first (its values are secrets too); the deploy stays
  // marked queued meanwhile. Without them the log files exist before the first await (deployer.ts).
  const variables = needsLoading(options.config, options.cwd)
    ? await loadDeployVariables(options.config, options.cwd, options.env ?? process.env).catch((error: Error) => ({
        vars: {},
        secrets: [],
        warnings: [],
        sourceProblems: [],
        problem: `internal error: ${error.message}`,
      }))
    : { ...readDeployVariables(options.config, options.cwd), warnings: [] };
  // The log files exist before the first await: the deployer's "queued" mark goes once they do.
  const run = new DeployRun({ ...options, secrets: [...(options.secrets ?? []), ...variables.secrets] });
  const ctx = contextOf(options, run, variables.vars);
  const { step } = run;
  run.start();
  if (options.forced) step("deploy", `forced: ${options.forced}`);
  for (const notice of options.notices ?? []) step("config", notice);
  for (const warning of variables.warnings) step("config", `warning: ${warning}`);
  for (const warning of options.warnings ?? []) step("warn", warning);
  if (options.target?.warning) step("warn", options.target.warning);
  const state = new DeployState(ctx.config.runScript);
  // docs/deploy-control.md "Cancel: `service cancel <id>`": its commands are stopped (deployer.ts); what has not
  // started does not start, but a script cut short is rolled back like any failed one.
  let ended = false;
  options.cancellation?.onCancel((by) => {
    // A cancel during the watch ends the watch (watch/watch.ts says so): what is live stays.
    if (ended || state.watching) return;
    step("deploy", `cancelled ${by}: stopping its commands (SIGTERM, then SIGKILL after ${KILL_GRACE_MS / 1000} s)`);
  });
  let releaseSlot = () => {};
  // One turn of the event loop before the deploy's work: the client's answer gets its first lines now, not once the
  // pull has started (what follows until then never waits for the loop).
  await new Promise<void>((resolve) => setImmediate(resolve));
  try {
    // A deploy without its variables (a missing secret file, a malformed line) does not start at all; nor one
    // whose checkout is on another branch than the app deploys.
    if (variables.problem) {
      state.error = `the deploy's variables cannot be read: ${variables.problem}`;
      step("config", `${state.error}; nothing runs`);
    } else if ((state.error = state.frozen = frozenNow(options, step))) {
      // A freeze began while it waited in the queue (docs/deploy-control.md "Freeze windows"): nothing runs.
    } else if (!(state.error = await checkoutStep(ctx))) {
      const gated = await passGate(ctx, state, options, run.actor);
      const asked = { ...options, ...(gated ? { gated } : {}) };
      if (gated === false || (gated && (state.error = state.frozen = frozenNow(options, step)))) {
        // The gate did not open, or a freeze began while it waited there: nothing live moved, nothing runs.
      } else if ((state.error = await applyLimits(ctx))) {
        // Limits that cannot be enforced: nothing runs, never silently unlimited.
      } else {
        // Everything heavy runs inside a build slot (deploy/slot.ts); a wait for checks held none.
        releaseSlot = await inSlot(ctx, run.id, async (waited) => {
          // A freeze that began during a long wait for a slot refuses it as one that began in the queue.
          if (waited && (state.error = state.frozen = frozenNow(options, step))) return;
          if (ctx.config.releases) {
            const { releaseFlow } = await import("../releases/flow.ts");
            await releaseFlow(ctx, state, asked);
          } else await plainFlow(ctx, state, asked);
        });
        // The watch (docs/watch.md, loaded only then) holds the queue's turn, not the build slot.
        if (ctx.config.watch) {
          const { watches, watchStage } = await import("./watched.ts");
          if (watches(ctx, state, options)) {
            releaseSlot();
            releaseSlot = () => {};
            await watchStage(ctx, state, options, run);
          }
        }
      }
    }
  } catch (caught) {
    state.error = `internal error: ${(caught as Error).message}`;
    step("deploy", state.error);
  }
  try {
    // Nothing follows the `[done]` line: a cancel that comes while the deploy ends changes nothing.
    ended = true;
    // A watch a cancel ended is a deploy that went live: recorded ok, its watch cancelled.
    const by = state.watch?.cancelled ? undefined : ctx.cancelled();
    // In place, what was live is read while git pulls (plainFlow); a deploy that never pulled reads it now: nothing
    // moved the clone. The releases flow reads `current` instead.
    if (state.liveBefore === undefined && !ctx.config.releases)
      state.liveBefore = await liveOrCheckedOut(ctx.cwd, ctx.app, ctx.config.repoPath, ctx.env);
    const produced = state.produced(by);
    // What the scripts left running (a daemon) is kept in the app's group after an ok deploy, stopped after a failed
    // one (steps/leftovers.ts): never without limits, unless asked.
    const left = await ctx.limits?.end(produced.ok);
    if (left) step("deploy", left);
    const live = state.liveCommit(produced.ok);
    const commits = await commitsOf(ctx, {
      live,
      before: state.liveBefore ?? null,
      tried: state.triedCommit(options.target, options.pushed),
    });
    const finishedAt = new Date();
    const target = commits.tried && { ...commits.tried, ...options.target };
    // Rolled back, the deploy ends ok=true though what it tried is not live: the line before `[done]` says which is.
    if (produced.ok && produced.rolledBack && commits.commit && commits.tried)
      step("rollback", `done: ${short(commits.commit.sha)} stays live; ${short(commits.tried.sha)} is not live`);
    // Refused after it was acknowledged: a record of the refused commit (docs/deploy-control.md "Requests"); one a
    // freeze refused is kept for the catch-up at its end.
    const refused = by ? undefined : state.refusal();
    if (state.frozen && keepForCatchUp(options, state.frozen))
      step("deploy", "kept for the catch-up at the end of the freeze");
    const ending = by ? "cancelled" : refused ? { outcome: "refused" as const, reason: refused } : "done";
    const result = run.end({ ...produced, ...commits, ...(target ? { target } : {}) }, ending, finishedAt);
    // The lead time's git call and the pruning of old releases run after the `[done]` line, still in the deploy's
    // queue turn (docs/log-files.md "Lead time in the record", docs/releases.md step 7): each amends the record.
    // git's automatic maintenance, left out of the pull, runs then too, without holding the turn.
    if (state.pulled.maintain) maintainAfterDone(ctx.config.repoPath, ctx.env, state.pulled);
    const lead = leadAfterDone(result, () =>
      committerDates(ctx.config.repoPath, state.liveBefore ?? null, live, ctx.env),
    );
    if (state.prune)
      await pruneAfterDone(
        result,
        state.prune,
        options.logger ?? defaultLogger(),
        `${options.app ? `app ${options.app}, ` : ""}deploy ${result.id}`,
      );
    await lead;
    return result;
  } finally {
    // The slot is held until the pruning is over: it is part of the deploy's work on the disk.
    releaseSlot();
  }
}

/**
 * The gate (docs/configuration.md "gate"; gate/stage.ts, loaded only for an app that has one): the commit it passed,
 * undefined when the deploy goes on without one, false when it did not open. A rollback restores what was live and
 * never waits there; `skipGate` passes it, and the record says so.
 */
async function passGate(
  ctx: DeployContext,
  state: DeployState,
  options: PlannedDeploy,
  actor: string | null,
): Promise<string | false | undefined> {
  const { gate } = ctx.config;
  if (!gate || isRollback(options)) return undefined;
  if (options.skipGate) {
    const reason = `skipped on request (${actor ?? options.trigger})`;
    ctx.run.step("gate", `${reason}: the checks are not read`);
    state.gate = { ok: true, outcome: "skipped", commit: null, checks: [], reason };
    return undefined;
  }
  const { gateStage } = await import("../gate/stage.ts");
  const gated = await gateStage(ctx, gate, options);
  state.gate = gated.result;
  if (gated.commit) return gated.commit;
  if (gated.result.outcome !== "cancelled")
    state.error = `gate ${gated.result.outcome === "timeout" ? "timed out" : "shut"}: ${gated.result.reason}`;
  return false;
}

/**
 * The deploy's `limits` (steps/limits.ts, loaded only for an app that has them): its cgroup made and said, or why
 * they cannot be enforced (then nothing runs).
 */
async function applyLimits(ctx: DeployContext): Promise<string | null> {
  const settings = ctx.config.limits;
  if (!settings) return null;
  const { DeployLimits } = await import("../steps/limits.ts");
  const opened = await DeployLimits.open(settings, ctx.run.id, { app: ctx.app, repoPath: ctx.config.repoPath });
  if ("problem" in opened) {
    ctx.run.step("deploy", `${opened.problem}; nothing runs`);
    return opened.problem;
  }
  ctx.limits = opened;
  ctx.run.step("deploy", `limits: ${opened.describe()}`);
  return null;
}

/** A deploy without releases: pull (or reset) and the run script in repoPath, the health check, the rollback. */
async function plainFlow(ctx: DeployContext, state: DeployState, options: Asked): Promise<void> {
  const { config, run } = ctx;
  // What was live, read from the history on the next turn of the event loop, once git pull has started: a read of
  // files that waits for nothing, and would otherwise hold the pull back. A service new to a checkout has no deploy
  // on record: what the pull found checked out was live.
  const recorded = new Promise<string | undefined>((resolve, reject) =>
    setImmediate(() => {
      try {
        resolve(liveCommitOf(ctx.cwd, ctx.app)?.sha);
      } catch (error) {
        reject(error);
      }
    }),
  );
  let verified = false;
  try {
    verified = await pullAndVerify(ctx, state, options);
  } finally {
    state.liveBefore = (await recorded) ?? state.pulled.before;
  }
  if (!verified) return;
  // What goes live is known now: its words are read while the script runs, and found read at the end (commitsOf).
  const { before, after } = state.pulled;
  void commitInfos(
    config.repoPath,
    [after, before].filter((c) => c !== null),
    ctx.env,
  ).catch(() => {});
  // Post-pull reload (docs/configuration.md "Config from the repository"), then the run script.
  reloadFromRepo(config, ctx.cwd, ctx.processEnv, run.step, ctx.app);
  const ran = (state.ran = await scriptStep(ctx, "run", run.output("run", state.runOut)));
  if (ran.exitCode !== 0 && !state.error) state.error = describeFailure(ran);
  // A script that exited 0 has not proven the app is up (docs/deploy-control.md "Health check").
  if (ran.exitCode === 0 && !state.error && !ctx.cancelled()) state.healthCheck = await healthStep(ctx);
  if (state.healthCheck && !state.healthCheck.ok) state.error = state.healthCheck.error;
  // Rollback (docs/deploy-control.md "Rollback").
  const undo = async () => {
    const rolled = await rollBack(ctx, state.pulled);
    state.rollback = rolled.rollback;
    state.rolledBack = rolled.rolledBack;
  };
  if ((ran.exitCode !== 0 || state.healthCheck?.ok === false) && config.rollbackOnFailure) await undo();
  // Live and healthy: a watch's breach takes it back the same way (deploy/watched.ts).
  else if (ran.exitCode === 0 && !state.error) state.undo = undo;
}

/**
 * What is live after the deploy, what was live before and what it tried, in words; a commit git cannot name (not in
 * the repository) keeps its sha with empty words. Never throws: a record without them is still a record.
 */
async function commitsOf(
  ctx: DeployContext,
  shas: { live: string | null; before: string | null; tried: string | null },
): Promise<{ commit: CommitInfo | null; previousCommit: CommitInfo | null; tried: CommitInfo | null }> {
  const { live, before, tried } = shas;
  const found = await commitInfos(
    ctx.config.repoPath,
    [live, before, tried].filter((c) => c !== null),
    ctx.env,
  ).catch(() => new Map<string, CommitInfo>());
  const words = (sha: string | null) => (sha ? (found.get(sha) ?? { sha, subject: "", author: "", date: "" }) : null);
  return { commit: words(live), previousCommit: words(before), tried: words(tried) };
}

/** The deploy's stages' context: a copy of the settings (the reload changes it) and the script's environment. */
function contextOf(options: PlannedDeploy, run: DeployRun, appVariables: Record<string, string>): DeployContext {
  const processEnv = options.env ?? process.env;
  const variables: Record<string, string> = {
    SERVICE_DEPLOY_ID: run.id,
    SERVICE_TRIGGER: options.trigger,
    // Always set (empty when unknown), like SERVICE_EVENT below.
    SERVICE_ACTOR: run.actor ?? "",
    SERVICE_REPO_PATH: options.config.repoPath,
    // Always set (empty without a forge event), so a value in the service's own environment never passes for one.
    SERVICE_EVENT: run.forge.event ?? "",
    SERVICE_DELIVERY: run.forge.delivery ?? "",
    // The tag deployed, and the ref (filled in by the pull or the reset): always set, empty when there is none.
    SERVICE_TAG: options.target?.tag ?? "",
    SERVICE_REF: "",
  };
  if (options.app) variables.SERVICE_APP = options.app;
  const env = scriptEnv(processEnv, variables, appVariables);
  const cancelled = () => options.cancellation?.reason;
  const onCancel = (listener: (by: string) => void) => options.cancellation?.onCancel(listener);
  const { cwd, app } = options;
  return { run, config: { ...options.config }, env, processEnv, cwd, app, cancelled, onCancel };
}
