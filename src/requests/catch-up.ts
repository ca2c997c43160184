import type { ResolvedApp } from "../config/apps.ts";
import { freezeAt } from "../config/freeze.ts";
import { keptRequests } from "../history/requests.ts";
import { pauseOf } from "../queue/pause.ts";
import { replay, type ReplayContext } from "./replay.ts";

/**
 * Catch-up (docs/deploy-control.md "Catch-up after a pause or a freeze"): for each app with `catchUp`, the requests a
 * pause or a freeze refused at the door (kept in history/requests.ts) are replayed once neither holds any more: the
 * newest decided again and deployed with trigger `catch-up` under its own actor, the older ones superseded by it
 * (replay.ts). Looked at every second from the files, so a `service resume` from another process, or a restart after
 * the window ended, is seen the same way.
 */
export interface CatchUpOptions extends ReplayContext {
  /** The apps in force; read at every look. */
  apps(): ResolvedApp[];
  /** Whether a deploy of the app runs or waits: looked at again once it is over. */
  busy(app: ResolvedApp): boolean;
  /** @internal Tests: look this often. */
  everyMs?: number;
}

/** How often the kept requests are looked at: a directory read per look. */
const LOOK_EVERY_MS = 1_000;

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
    const kept = keptRequests(cwd, app.name);
    if (kept.length === 0 || pauseOf(cwd, app.name) || freezeAt(app.freeze, new Date()) || this.options.busy(app))
      return;
    try {
      await replay(this.options, app, kept, "catch-up");
    } catch (error) {
      // The requests stay kept: the next look tries again.
      logger.warn(
        `catch-up of ${app.name ? `app "${app.name}"` : "the app"} cannot start: ${(error as Error).message}`,
      );
    }
  }
}
