/**
 * Recovery at start (docs/deploy-control.md "Replay"): the requests a dead process acknowledged and never ran (killed
 * with -9, out of memory, a power cut) are replayed like a catch-up's, with trigger `recovered` and their own actors.
 * One that a pause or a freeze holds now is kept for the catch-up (with `catchUp`) or recorded refused; one of an app
 * no longer configured is recorded superseded; a `service deploy`'s is recorded cancelled: the shell that asked saw it
 * die, and asks again if it still wants it.
 */
import type { ResolvedApp } from "../config/apps.ts";
import { freezeAt } from "../config/freeze.ts";
import { frozenText } from "../deploy/frozen.ts";
import { dropRequest, orphanedRequests, storeRequest, type StoredRequest } from "../history/requests.ts";
import { pauseOf } from "../queue/pause.ts";
import { replayedOf } from "../deploy/request.ts";
import { replay, type ReplayContext } from "./replay.ts";

export interface RecoveryContext extends ReplayContext {
  /** Records a `service deploy` request whose process died before it started. */
  cancelled(options: Parameters<ReplayContext["record"]>[0], reason: string): Promise<unknown>;
}

/** Replays the orphaned requests of `apps`; returns how many there were. */
export async function recoverRequests(ctx: RecoveryContext, apps: ResolvedApp[]): Promise<number> {
  const orphans = orphanedRequests(ctx.cwd);
  if (orphans.length === 0) return 0;
  ctx.logger.warn(
    `${orphans.length} acknowledged request(s) never ran: the process that held them stopped; replaying them (trigger recovered)`,
  );
  const byApp = new Map<ResolvedApp, StoredRequest[]>();
  for (const request of orphans) {
    const app = apps.find((each) => each.name === request.app);
    const options = (of: ResolvedApp | undefined) => ({
      ...asOptions(request),
      config: of ?? apps[0]!,
      cwd: ctx.cwd,
      secrets: ctx.secrets(),
    });
    if (request.cli) {
      await ctx.cancelled(options(app), "the service deploy that asked for it stopped before it started");
      dropRequest(ctx.cwd, request.id);
    } else if (!app) {
      await ctx.record(options(undefined), "superseded", `app "${request.app}" is no longer configured`);
      dropRequest(ctx.cwd, request.id);
    } else byApp.set(app, [...(byApp.get(app) ?? []), request]);
  }
  for (const [app, requests] of byApp) {
    const pause = pauseOf(ctx.cwd, app.name);
    const freeze = freezeAt(app.freeze, new Date());
    const held = pause ? `deploys are paused: ${pause.reason}` : freeze ? frozenText(freeze) : undefined;
    if (!held) {
      await replay(ctx, app, requests, "recovered");
      continue;
    }
    for (const request of requests) {
      if (app.catchUp) storeRequest(ctx.cwd, { ...request, state: "kept", reason: held });
      else {
        await ctx.record({ ...asOptions(request), config: app, cwd: ctx.cwd, secrets: ctx.secrets() }, "refused", held);
        dropRequest(ctx.cwd, request.id);
      }
    }
  }
  return orphans.length;
}

/** A request's fields as a record's options take them (its own id, actor, commit and deployment). */
function asOptions(request: StoredRequest) {
  const { actor, ...rest } = replayedOf(request, "recovered");
  return { ...rest, app: request.app, ...(actor ? { actor } : {}) };
}
