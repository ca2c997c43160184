/**
 * A server's requests: the deploys it starts itself (the admin API's, the poller's, a replayed request's), and the
 * replays (requests/, docs/deploy-control.md "Replay"): what an earlier stop left, looked at once at start (among it
 * the requests a dead process acknowledged and never ran, requests/recover.ts, loaded only then), and the catch-up
 * of the requests a pause or a freeze kept, with `catchUp` on an app (requests/catch-up.ts, loaded only then). Both
 * replays deploy through the server's own deploys and record through its deployer.
 */
import type { Logger } from "../system/logger.ts";
import { join } from "node:path";
import type { ResolvedApp } from "../config/apps.ts";
import type { Deployer } from "../deploy/deployer.ts";
import type { DeployOptions } from "../deploy/types.ts";
import { freezeNotices } from "../deploy/frozen.ts";
import { pauseNotices } from "../queue/pause.ts";
import { markInterruptedDeploys } from "../queue/recovery.ts";
import { queueKey, scanTickets, ticketDir } from "../queue/tickets.ts";
import { hasStoredRequests } from "../history/requests.ts";
import { ensurePrivateDir } from "../system/files.ts";
import type { AuditEvent } from "../audit/entry.ts";
import type { DeploySink, Unrun } from "../types.ts";
import type { Metrics, QueueDeploy } from "./admin.ts";
import { recoverAppReleases, recoverLimitGroups } from "./optional.ts";

/**
 * A deploy the service starts itself (admin API, poll, catch-up, recovery; with a target, the API's rollback or a
 * ref): its result is only logged.
 */
function serviceDeploys(server: RequestsWiring): QueueDeploy {
  return (app, request) => {
    const { trigger, target, force, skipGate, noCarry, paths, pushed, deployment, event, delivery, sub } = request;
    const actor = request.actor ?? undefined;
    const id = request.id ?? crypto.randomUUID();
    let position = 0;
    const observed: DeploySink = (event) => {
      if (event.type === "queued") position = event.position;
    };
    const metrics = server.metrics();
    const sink = metrics ? metrics.observe(app.name ?? "default", observed) : observed;
    const notices = server.notices();
    const deploy = { id, app: app.name, config: app, trigger, actor, cwd: server.cwd, sink, notices };
    const secrets = server.secrets();
    const asked = {
      ...deploy,
      secrets,
      ...(target ? { target } : {}),
      ...(skipGate ? { skipGate } : {}),
      ...(noCarry ? { noCarry } : {}),
      ...(paths ? { paths } : {}),
      ...(pushed ? { pushed } : {}),
      ...(deployment ? { deployment } : {}),
      ...(event ? { event } : {}),
      ...(delivery ? { delivery } : {}),
      ...(sub ? { sub } : {}),
    };
    server.track(id, server.deployer.deploy(asked, { force }));
    return { id, position };
  };
}

/** What the requests use of their server. */
export interface RequestsWiring {
  cwd: string;
  logger: Logger;
  deployer: Deployer;
  /** The apps in force now. */
  apps: () => ResolvedApp[];
  /** The counters, when the admin listener is on. */
  metrics: () => Metrics | undefined;
  /** What a deploy's output says first (a configuration refused at its last reload). */
  notices: () => string[];
  secrets: () => string[];
  /** Keeps a started deploy until it ends: a stop waits for it. */
  track: (id: string, result: Promise<unknown>) => void;
  audit: (event: AuditEvent) => void;
}

/** Whether a deploy of the app's repository runs or waits, in any process (the queue's tickets). */
export const busy = (app: ResolvedApp) => scanTickets(ticketDir(queueKey(app.repoPath))).live.length > 0;

/**
 * Creates `.service/` at start: the sign, for `service pause`, `status` and the other control commands run later in
 * this directory, that a service works here even before its first deploy (its settings may all be in the
 * environment). Best effort: a deploy says so when its log directory cannot be made.
 */
function markServiceDir(cwd: string): void {
  try {
    ensurePrivateDir(join(cwd, ".service"));
  } catch {}
}

/** The requests of one server: the deploys it starts itself, its recovery at start, its catch-up watcher. */
export class ServerRequests {
  private catchUps: { stop(): void } | undefined;
  /** A deploy the service starts itself (admin API, poll, catch-up, recovery). */
  readonly queue: QueueDeploy;

  constructor(private readonly server: RequestsWiring) {
    this.queue = serviceDeploys(server);
  }

  /** With `catchUp` on an app: the watcher that deploys a push refused by a pause or a freeze once it ends. */
  async watchForCatchUps(apps: ResolvedApp[]): Promise<void> {
    if (this.catchUps || !apps.some((app) => app.catchUp)) return;
    const { CatchUpWatcher } = await import("../requests/catch-up.ts");
    const watcher = new CatchUpWatcher({
      ...this.replaying(),
      apps: this.server.apps,
      busy,
      deploy: (app, request) => {
        const { id } = this.queue(app, request);
        const actor = request.actor ?? "service";
        this.server.audit({ actor, action: "catch-up", app: app.name ?? "default", deploy: id, outcome: "ok" });
        this.server.metrics()?.caughtUp(app.name ?? "default");
      },
    });
    watcher.start();
    this.catchUps = watcher;
  }

  /** The catch-up watcher stopped (a stop of the server). */
  stop(): void {
    this.catchUps?.stop();
    this.catchUps = undefined;
  }

  /** A deploy's options with the counters listening (when the admin listener is on). */
  private observed(options: DeployOptions): DeployOptions {
    const metrics = this.server.metrics();
    return metrics ? { ...options, sink: metrics.observe(options.app ?? "default", options.sink) } : options;
  }

  /** How requests are replayed (requests/): deployed by this server's queue, recorded by its deployer. */
  private replaying() {
    const { cwd, logger, deployer, audit } = this.server;
    return {
      cwd,
      logger,
      deploy: (app: ResolvedApp, request: Parameters<QueueDeploy>[1]) => void this.queue(app, request),
      record: (options: DeployOptions, outcome: Unrun, reason: string) => {
        // A catch-up that ends a kept request without running it is a line of the audit trail, as its deploy is.
        if (options.trigger === "catch-up")
          audit({
            actor: options.actor ?? "service",
            action: "catch-up",
            app: options.app ?? "default",
            ...(options.id ? { deploy: options.id } : {}),
            outcome: "refused",
            reason,
          });
        return deployer.recordUnrun(this.observed(options), outcome, reason);
      },
      cancelled: (options: DeployOptions, reason: string) =>
        deployer.recordUnrun(this.observed(options), "cancelled", reason),
      secrets: this.server.secrets,
    };
  }

  /**
   * What an earlier stop left: pauses said, deploys it interrupted marked, releases it left half-made removed, and the
   * requests it acknowledged and never ran replayed.
   */
  async recover(apps: ResolvedApp[]): Promise<void> {
    const { cwd, logger } = this.server;
    for (const line of pauseNotices(
      cwd,
      apps.map((a) => a.name),
    ))
      logger.warn(line);
    for (const line of freezeNotices(apps)) logger.warn(line);
    markServiceDir(cwd);
    for (const id of markInterruptedDeploys(cwd, logger))
      logger.warn(`deploy ${id} was interrupted by an earlier stop of the service; its log is marked "interrupted"`);
    await recoverAppReleases(cwd, apps, logger);
    await recoverLimitGroups(apps, logger);
    if (hasStoredRequests(cwd)) await (await import("../requests/recover.ts")).recoverRequests(this.replaying(), apps);
  }
}
