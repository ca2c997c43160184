import type { ResolvedApp } from "../config/apps.ts";
import { freezeAt } from "../config/freeze.ts";
import { liveCommitOf } from "../history/live.ts";
import { pauseOf } from "../queue/pause.ts";
import { forgetRefusedPush, refusedPush } from "../queue/refused.ts";
import { headCommit, lsRemote, short } from "../system/git.ts";
import type { Logger } from "../system/logger.ts";
import type { RollbackTarget } from "../types.ts";
import { DeployRefError, tagsTarget } from "./deploy-ref.ts";
import { pollTarget } from "./poll-target.ts";

/**
 * Catch-up (docs/deploy-control.md "Catch-up after a pause or a freeze"): for each app with `catchUp`, a push refused
 * while it was paused or frozen (queue/refused.ts) is deployed once when neither holds any more, with trigger
 * `catch-up` and the actor of that push. Looked at every few seconds from the files, so a `service resume` from
 * another process, or a restart after the window ended, is seen the same way. Skipped when the remote's tip is
 * live already (a poll or a webhook deployed it since).
 */
export interface CatchUpOptions {
  cwd: string;
  logger: Logger;
  /** The apps in force; read at every look. */
  apps(): ResolvedApp[];
  /** Whether a deploy of the app runs or waits: looked at again once it is over. */
  busy(app: ResolvedApp): boolean;
  /** Queues the catch-up deploy of `app` on behalf of `actor` (of a tag with `tags`); throws when the queue refuses it. */
  deploy(app: ResolvedApp, actor: string, target?: RollbackTarget): void;
  /** The refused push was dropped, not deployed: why (for the audit trail). */
  dropped?(app: ResolvedApp, reason: string): void;
  /** @internal Tests: look this often. */
  everyMs?: number;
}

/** How often the refused pushes are looked at: a file read per app with catchUp. */
const LOOK_EVERY_MS = 1_000;
const LS_REMOTE_TIMEOUT_MS = 30_000;

export class CatchUpWatcher {
  private timer: ReturnType<typeof setInterval> | undefined;
  private looking = false;
  private stopped = false;

  constructor(private readonly options: CatchUpOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.look(), this.options.everyMs ?? LOOK_EVERY_MS);
    this.timer.unref?.();
    void this.look();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private async look(): Promise<void> {
    if (this.looking || this.stopped) return;
    this.looking = true;
    try {
      for (const app of this.options.apps()) if (app.catchUp) await this.catchUp(app);
    } finally {
      this.looking = false;
    }
  }

  private async catchUp(app: ResolvedApp): Promise<void> {
    const { cwd, logger } = this.options;
    const push = refusedPush(cwd, app.name);
    if (!push || pauseOf(cwd, app.name) || freezeAt(app.freeze, new Date()) || this.options.busy(app)) return;
    const label = app.name ? `app "${app.name}"` : "the app";
    try {
      // With `tags`, what a push would have deployed is the highest matching tag.
      const tagged = await tagsTarget(cwd, app, process.env);
      const tip = tagged ? tagged.commit : await this.branchTip(app);
      const live = liveCommitOf(cwd, app.name)?.sha ?? (await headCommit(app.repoPath, process.env));
      if (this.stopped || this.options.busy(app)) return;
      forgetRefusedPush(cwd, app.name);
      if (tip && tip === live) {
        logger.info(`catch-up of ${label} skipped: ${short(tip)}, the branch's tip, is live already`);
        this.options.dropped?.(app, "dropped: the branch's tip is live already");
        return;
      }
      this.options.deploy(app, push.actor, tagged);
      logger.info(`catching up ${label}: deploying the push of ${push.actor} refused at ${push.at}`);
    } catch (error) {
      // No tag may deploy (none matches, or it is below the live one): nothing to catch up, and nothing to retry.
      if (error instanceof DeployRefError && error.cause === undefined) {
        forgetRefusedPush(cwd, app.name);
        logger.info(`catch-up of ${label} skipped: ${error.message}`);
        this.options.dropped?.(app, `dropped: ${error.message}`);
        return;
      }
      // The memory stays: the next look tries again.
      logger.warn(`catch-up of ${label} cannot start: ${(error as Error).message}`);
    }
  }

  /** The remote's commit of the branch a push would have deployed. */
  private async branchTip(app: ResolvedApp): Promise<string | null> {
    const target = await pollTarget(app.repoPath, app.branch);
    if (typeof target === "string") throw new Error(target);
    return lsRemote(app.repoPath, target.remote, target.ref, process.env, LS_REMOTE_TIMEOUT_MS);
  }
}
