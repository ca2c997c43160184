/**
 * Replaying requests (docs/deploy-control.md "Replay"): the kept requests of an app at the end of a pause or a freeze
 * (catch-up), or the ones a dead process acknowledged and never ran (recovery at start). Of several, only the newest
 * runs; each older one is recorded `superseded` by it, under its own actor. The newest is decided again as of now
 * (decide-again.ts): it runs under its own actor, with its own commit and deployment, or is recorded `superseded`
 * with why. Nothing is deployed under another request's name.
 */
import type { ResolvedApp } from "../config/apps.ts";
import { dropRequest, type StoredRequest } from "../history/requests.ts";
import { type Replayed, type ReplayTrigger, replayedOf } from "../deploy/request.ts";
import type { DeployOptions } from "../deploy/types.ts";
import type { Logger } from "../system/logger.ts";
import type { DeployResult, Unrun } from "../types.ts";
import { decideAgain } from "./decide-again.ts";

export interface ReplayContext {
  cwd: string;
  logger: Logger;
  /** Queues the deploy of a request that runs; throws when the queue refuses it. */
  deploy(app: ResolvedApp, request: Replayed): void;
  /** Records a request that ends without running (its outbound sinks told). */
  record(options: DeployOptions, outcome: Unrun, reason: string): Promise<DeployResult>;
  /** The secrets a record must not show. */
  secrets(): string[];
}

/** The options of a request's record when it does not run. */
function unrunOptions(
  ctx: ReplayContext,
  app: ResolvedApp,
  request: StoredRequest,
  trigger: ReplayTrigger,
): DeployOptions {
  const { id: _id, ...asked } = replayedOf(request, trigger);
  const actor = asked.actor ?? undefined;
  return { ...asked, actor, id: request.id, app: app.name, config: app, cwd: ctx.cwd, secrets: ctx.secrets() };
}

/**
 * Replays `requests` of `app` (oldest first): the older ones superseded by the newest, the newest decided again.
 * Returns false when the remote could not be asked: the newest stays where it is, for the next look.
 */
export async function replay(
  ctx: ReplayContext,
  app: ResolvedApp,
  requests: StoredRequest[],
  trigger: ReplayTrigger,
): Promise<boolean> {
  const newest = requests.at(-1);
  if (!newest) return true;
  const label = app.name ? `app "${app.name}"` : "the app";
  for (const older of requests.slice(0, -1)) {
    const by = `superseded by the newer request ${newest.id.slice(0, 8)} of ${newest.actor ?? "someone"}`;
    await ctx.record(unrunOptions(ctx, app, older, trigger), "superseded", by);
    dropRequest(ctx.cwd, older.id);
  }
  const decision = await decideAgain(ctx.cwd, app, newest, ctx.logger);
  if (!decision.runs && "retry" in decision) {
    ctx.logger.warn(`${trigger} of ${label} waits: ${decision.retry}`);
    return false;
  }
  if (!decision.runs) {
    ctx.logger.info(
      `${trigger} of ${label}: the request of ${newest.actor ?? "someone"} is superseded: ${decision.reason}`,
    );
    await ctx.record(unrunOptions(ctx, app, newest, trigger), "superseded", decision.reason);
    dropRequest(ctx.cwd, newest.id);
    return true;
  }
  const replayed = replayedOf(newest, trigger);
  ctx.deploy(app, {
    ...replayed,
    ...(decision.target ? { target: decision.target } : {}),
    ...(decision.paths ? { paths: decision.paths } : {}),
  });
  ctx.logger.info(`${trigger} of ${label}: deploying the request of ${newest.actor ?? "someone"} (${newest.id})`);
  return true;
}
