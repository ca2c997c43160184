/**
 * A deploy's request as history/requests.ts keeps it (docs/deploy-control.md "Requests"): what was asked, from the
 * options every entrance gives the deployer (`requestOf`), and back again as the deployer takes it when it is
 * replayed (`replayedOf`, its inverse); the request kept for catch-up when a pause or a freeze refuses it.
 */
import type { PathsRecord } from "../history/record.ts";
import { dropRequest, keptRequests, storeRequest, type StoredRequest } from "../history/requests.ts";
import { cleanActor } from "../system/actor.ts";
import type { RollbackTarget, Trigger } from "../types.ts";
import type { DeployOptions } from "./types.ts";

/**
 * Most requests kept per app: only the newest runs at the catch-up (the others are superseded by it), so a long
 * freeze under a stream of pushes keeps the newest ones and forgets the oldest beyond this.
 */
export const MAX_KEPT = 100;

/** The triggers whose requests are kept for catch-up when a pause or a freeze refuses them: pushes, not people. */
const KEPT_TRIGGERS = new Set<string>(["webhook", "poll", "catch-up", "recovered"]);

/** What a deploy was asked, as its request keeps it (history/requests.ts). */
export function requestOf(
  options: DeployOptions & { id: string },
  cli: boolean,
): Omit<StoredRequest, "pid" | "pidStart" | "at"> {
  const { target, pushed, deployment, event, delivery } = options;
  return {
    id: options.id,
    state: "queued",
    ...(options.app !== undefined ? { app: options.app } : {}),
    trigger: options.trigger,
    actor: cleanActor(options.actor) ?? null,
    ...(options.sub ? { sub: options.sub } : {}),
    repoPath: options.config.repoPath,
    named: {
      ...(target ? { target } : {}),
      ...(pushed ? { pushed } : {}),
      ...(deployment ? { deployment } : {}),
      ...(event ? { event } : {}),
      ...(delivery ? { delivery } : {}),
    },
    ...(options.paths ? { passed: { paths: options.paths } } : {}),
    ...(options.skipGate ? { skipGate: true as const } : {}),
    ...(options.noCarry ? { noCarry: true as const } : {}),
    ...(cli ? { cli: true as const } : {}),
  };
}

/** How a replayed request is recorded: caught up after a pause or a freeze, or recovered after a crash. */
export type ReplayTrigger = Extract<Trigger, "catch-up" | "recovered">;

/** What a replayed request asks of the deployer. */
export interface Replayed {
  id: string;
  trigger: ReplayTrigger | "rollback";
  actor: string | null;
  sub?: string;
  target?: RollbackTarget;
  pushed?: string;
  deployment?: StoredRequest["named"]["deployment"];
  event?: string | null;
  delivery?: string | null;
  paths?: PathsRecord;
  skipGate?: boolean;
  noCarry?: boolean;
}

/** The request as the deployer takes it, under `trigger` (`catch-up`, `recovered`). */
export function replayedOf(request: StoredRequest, trigger: ReplayTrigger): Replayed {
  const { target, pushed, deployment, event, delivery } = request.named;
  return {
    id: request.id,
    // A rollback stays a rollback (never frozen, never gated): it puts back what was live.
    trigger: request.trigger === "rollback" ? "rollback" : trigger,
    actor: request.actor,
    ...(request.sub ? { sub: request.sub } : {}),
    ...(target ? { target } : {}),
    ...(pushed ? { pushed } : {}),
    ...(deployment ? { deployment } : {}),
    ...(event ? { event } : {}),
    ...(delivery ? { delivery } : {}),
    ...(request.passed?.paths ? { paths: request.passed.paths } : {}),
    ...(request.skipGate ? { skipGate: true } : {}),
    ...(request.noCarry ? { noCarry: true } : {}),
  };
}

/**
 * Keeps a request refused by a pause or a freeze for catch-up (with `catchUp`; a person's request was answered to
 * someone who can ask again): under a new id, as the refused one has its record. Returns whether it was kept.
 */
export function keepForCatchUp(options: DeployOptions, reason: string): boolean {
  if (!options.config.catchUp || !KEPT_TRIGGERS.has(options.trigger)) return false;
  const kept = keptRequests(options.cwd, options.app);
  // A poll names nothing and stands for the same push each minute: one is enough.
  if (options.trigger === "poll" && kept.some((request) => request.trigger === "poll")) return true;
  for (const old of kept.slice(0, Math.max(0, kept.length - MAX_KEPT + 1))) dropRequest(options.cwd, old.id);
  const request = requestOf({ ...options, id: crypto.randomUUID() }, false);
  return storeRequest(options.cwd, { ...request, state: "kept", reason }) === undefined;
}
