/**
 * One preview's build and teardown (docs/previews.md "Life cycle"), each run in the preview's lane by manager.ts:
 * the build stops what the previous build left running, writes the head's files, runs the run script in a
 * preview build slot; the teardown runs the teardown script, stops what the preview left running, removes its
 * directory and frees its port. The state is written at each step, the routes and the pull request told.
 */
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ResolvedApp } from "../config/apps.ts";
import type { Logger } from "../system/logger.ts";
import { shown } from "../system/shown.ts";
import type { DeployLimits } from "../steps/limits.ts";
import { scriptLimits } from "../system/process.ts";
import { dropHead, removeTree, writeTree } from "./checkout.ts";
import { markerOf, previewEnv } from "./env.ts";
import { previewsChanged } from "./routes.ts";
import { runScript, stopPreview } from "./scripts.ts";
import { previewSlot } from "./slot.ts";
import { previewsDir, readPreviews, writePreviews } from "./state.ts";
import { targetOf } from "./forge-ask.ts";
import { previewGate } from "./gate.ts";
import type { PreviewPhase } from "./report-types.ts";
import type { Preview, PreviewSettings } from "./types.ts";

/** What a build and a teardown use of the manager. */
export interface LifeContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  stopped: () => boolean;
  /** Adds to this process's previews building now; returns how many. */
  building: (delta: number) => number;
  count: (what: "deploy" | "teardown", app: string, outcome: string) => void;
  settings: () => PreviewSettings[];
  all: () => Preview[];
}

type App = ResolvedApp & { previews: PreviewSettings };

/** A failed teardown runs its script this many times; later tries only stop and remove. */
const SCRIPT_TRIES = 3;

const nameOf = (app: App) => app.name ?? "default";

/** The limits of a preview's build under the app's `limits`: its own group, its leftovers kept apart from the app's. */
async function limitsOf(app: App, number: number): Promise<DeployLimits | { problem: string } | undefined> {
  if (!app.limits) return undefined;
  const { DeployLimits } = await import("../steps/limits.ts");
  const of = { app: `preview-${nameOf(app)}-pr-${number}`, repoPath: app.repoPath };
  return DeployLimits.open(app.limits, crypto.randomUUID(), of);
}

/** The build log of a preview: `.service/previews/<app>/pr-<n>.log`, the last build's output. */
export function logOf(cwd: string, app: string, number: number): string {
  return join(previewsDir(cwd), app, `pr-${number}.log`);
}

/** Changes the kept preview (when it is still there) and writes the state; returns it as it is now. */
function update(cwd: string, app: string, number: number, change: (p: Preview) => void): Preview | undefined {
  const state = readPreviews(cwd, app);
  const preview = state.previews.find((p) => p.number === number);
  if (!preview) return undefined;
  change(preview);
  writePreviews(cwd, app, state);
  return preview;
}

/**
 * The routes written and the pull request told (a failure of either is logged, never thrown). The report's code
 * (report*.ts, comment*.ts) is loaded at its first use, by an app whose `status` lets it tell.
 */
async function tell(context: LifeContext, app: App, preview: Preview, phase: PreviewPhase, extra = {}) {
  try {
    await previewsChanged(context.cwd, context.all(), context.settings());
  } catch (error) {
    context.logger.warn(`previews ${nameOf(app)}: routes: ${(error as Error).message}`);
  }
  const target = await targetOf(app, context.cwd, context.env);
  if (!target) return;
  const { reportPreview } = await import("./report.ts");
  const reported = await reportPreview({ target, settings: app.previews, preview, phase, ...extra });
  for (const problem of reported.problems) context.logger.warn(`previews ${nameOf(app)}: ${shown(problem)}`);
  if (Object.keys(reported.keep).length > 0)
    update(context.cwd, nameOf(app), preview.number, (p) => Object.assign(p, reported.keep));
}

/** Builds the preview of PR `number` at the head its state names (set `building` by the manager). */
export async function buildPreview(context: LifeContext, app: App, number: number, actor: string): Promise<void> {
  const { cwd } = context;
  const name = nameOf(app);
  const settings = app.previews;
  const first = readPreviews(cwd, name).previews.find((p) => p.number === number);
  if (!first) return;
  const started = Date.now();
  await tell(context, app, first, "building");
  // With previews.gate, the forge's checks on the head first (no build slot held while they are pending).
  const gated = settings.gate
    ? await previewGate(app, await targetOf(app, cwd, context.env), first.head, context.stopped)
    : undefined;
  if (gated) return ended(context, app, number, gated, started);
  const slot = await previewSlot(
    cwd,
    app.maxConcurrentDeploys,
    settings.slots,
    { app: name, number },
    context.stopped,
    () => context.building(0),
  );
  if (!slot) return;
  context.building(1);
  let reason: string | undefined;
  try {
    const preview = readPreviews(cwd, name).previews.find((p) => p.number === number);
    if (!preview) return;
    // The previous build's server holds the port: stopped before the new one starts.
    if (!(await stopPreview(preview.groups ?? [], markerOf(preview))))
      reason = "what the previous build left running could not be stopped";
    const log = logOf(cwd, name, number);
    mkdirSync(join(previewsDir(cwd), name), { recursive: true, mode: 0o700 });
    rmSync(log, { force: true });
    reason ??= await writeTree(app.repoPath, preview.head, preview.dir, settings.user, context.env);
    // The app's `limits` hold its previews' builds too, each in a cgroup of its own.
    const limits = reason ? undefined : await limitsOf(app, number);
    if (limits && "problem" in limits) reason = limits.problem;
    else if (!reason) {
      const build = () =>
        runScript(settings.runScript ?? app.runScript, {
          dir: preview.dir,
          env: previewEnv(settings, preview, actor),
          ...(settings.user ? { user: settings.user } : {}),
          timeoutMs: app.runTimeoutMs,
          log,
        });
      const run = limits ? await scriptLimits.run(limits, build) : await build();
      const ended = await limits?.end(run.ok);
      if (ended) context.logger.info(`previews ${name}: pull request #${number}: ${ended}`);
      update(cwd, name, number, (p) => {
        p.groups = run.groups;
      });
      reason = run.reason;
    }
  } catch (error) {
    reason = (error as Error).message;
  } finally {
    context.building(-1);
    slot.release();
  }
  await ended(context, app, number, reason, started);
}

/** A build's end: its status and outcome kept, counted, logged, told. */
async function ended(context: LifeContext, app: App, number: number, reason: string | undefined, started: number) {
  const name = nameOf(app);
  const after = update(context.cwd, name, number, (p) => {
    p.status = reason ? "failed" : "running";
    p.outcome = reason ? "failed" : "ok";
    p.updated = new Date().toISOString();
    if (reason) p.reason = reason;
    else delete p.reason;
  });
  context.count("deploy", name, reason ? "failed" : "ok");
  context.logger.info(`previews ${name}: pull request #${number}: ${reason ? `failed: ${shown(reason)}` : "running"}`);
  if (after)
    await tell(context, app, after, reason ? "failed" : "ok", {
      durationMs: Date.now() - started,
      ...(reason ? { reason } : {}),
    });
}

/**
 * Tears the preview of PR `number` down: its teardown script, what it left running, its directory, its head's
 * ref; gone from the state, its port free. A failure keeps it as `teardown failed` (the sweep tries again).
 */
export async function teardownPreview(context: LifeContext, app: App, number: number, why: string): Promise<void> {
  const { cwd } = context;
  const name = nameOf(app);
  const settings = app.previews;
  const preview = readPreviews(cwd, name).previews.find((p) => p.number === number);
  if (!preview) return;
  const problems: string[] = [];
  const tries = preview.teardownTries ?? 0;
  if (settings.teardownScript && existsSync(preview.dir) && tries < SCRIPT_TRIES) {
    const run = await runScript(settings.teardownScript, {
      dir: preview.dir,
      env: previewEnv(settings, preview, "service"),
      ...(settings.user ? { user: settings.user } : {}),
      timeoutMs: settings.teardownTimeoutMs,
      log: logOf(cwd, name, number),
    });
    if (!run.ok) problems.push(`teardown script: ${run.reason}`);
    preview.groups = [...(preview.groups ?? []), ...run.groups];
  }
  if (!(await stopPreview(preview.groups ?? [], markerOf(preview))))
    problems.push("what it left running could not be stopped");
  if (problems.length === 0) {
    const removed = await removeTree(preview.dir, settings.user);
    if (removed) problems.push(removed);
  }
  if (problems.length > 0) {
    const reason = problems.join("; ");
    update(cwd, name, number, (p) => {
      p.status = "teardown failed";
      p.reason = reason;
      p.groups = preview.groups ?? [];
      p.teardownTries = tries + 1;
    });
    context.count("teardown", name, "failed");
    context.logger.warn(`previews ${name}: pull request #${number}: teardown failed: ${shown(reason)}`);
    return;
  }
  await dropHead(app.repoPath, number, context.env);
  const state = readPreviews(cwd, name);
  state.previews = state.previews.filter((p) => p.number !== number);
  writePreviews(cwd, name, state);
  rmSync(logOf(cwd, name, number), { force: true });
  context.count("teardown", name, "ok");
  context.logger.info(`previews ${name}: pull request #${number}: torn down (${why})`);
  await tell(context, app, { ...preview, updated: new Date().toISOString() }, "teardown");
}
