/**
 * The optional features of a server, each loaded (a dynamic import) only once the configuration asks for it, so a
 * server that needs none of them holds none of their code: the outbound calls (commit statuses, notifications), the
 * poller, the crash cleanup of releases, the admin listener (features/admin.ts). What stays loaded is the check.
 */
import type { ResolvedApp } from "../config/apps.ts";
import type { OutboundDeploy, OutboundSinks, QueuedDeploy, RefusedDeployment } from "../deploy/types.ts";
import type { PollerOptions } from "../control/poll.ts";
import type { Notified, OutboundCalls } from "../notify/outbound.ts";
import type { DeployEvent, DeploySink } from "../types.ts";

/**
 * The outbound sinks of a server's deploys: a deploy whose app sets neither `status` nor `notify` gets none, and
 * loads nothing. The first one that does loads the notify code; the events of its deploy until then are handed over
 * in order once it is there (outbound calls are background work: they never hold the run).
 */
export class LazyOutbound {
  private loaded: Promise<{ calls: OutboundCalls; sinks: OutboundSinks }> | undefined;

  /** `notified`: told each notification's outcome (counted, and a failure logged). */
  constructor(private readonly notified?: (told: Notified) => void) {}

  private load() {
    this.loaded ??= Promise.all([import("../notify/outbound.ts"), import("../notify/sink.ts")]).then(
      ([{ OutboundCalls }, { outboundSinks }]) => {
        const calls = new OutboundCalls(this.notified);
        return { calls, sinks: outboundSinks(calls) };
      },
    );
    return this.loaded;
  }

  readonly sinks: OutboundSinks = Object.assign(
    (deploy: OutboundDeploy) => {
      if (!deploy.config.status && (deploy.config.notify ?? []).length === 0) return undefined;
      let sink: DeploySink | undefined;
      let held: DeployEvent[] | undefined = [];
      void this.load().then(({ sinks }) => {
        sink = sinks(deploy);
        for (const event of held ?? []) sink?.(event);
        held = undefined;
      });
      return (event: DeployEvent) => (held ? held.push(event) : sink?.(event));
    },
    {
      // Loaded before the deploy's sink asks for it: the sink finds the `queued` status it follows.
      queued: (deploy: QueuedDeploy) => {
        if (deploy.config.status) void this.load().then(({ sinks }) => sinks.queued?.(deploy));
      },
      refused: (deploy: RefusedDeployment, reason: string, kept: boolean) => {
        if (deploy.config.status) void this.load().then(({ sinks }) => sinks.refused?.(deploy, reason, kept));
      },
    },
  );

  /** Waits at most `graceMs` for the calls still in flight (a stop); the rest are recorded as not sent. */
  async settle(graceMs: number): Promise<void> {
    if (this.loaded) await (await this.loaded).calls.settle(graceMs);
  }
}

/** How often the apps in force are looked at for one that polls (a reload may add one): as the poller does. */
const POLL_CHECK_MS = 60_000;

/**
 * The poller, started once an app in force polls (`pollIntervalMs`): looked at now and every minute, as the poller
 * itself picks up apps a reload added.
 */
export class PollingWhenConfigured {
  private timer: ReturnType<typeof setInterval> | undefined;
  private poller: Promise<{ stop(): void } | undefined> | undefined;
  private stopped = true;

  constructor(private readonly options: PollerOptions) {}

  start(): void {
    this.stopped = false;
    this.check();
    if (this.poller) return;
    this.timer = setInterval(() => this.check(), Math.min(POLL_CHECK_MS, this.options.everyMs ?? POLL_CHECK_MS));
    this.timer.unref?.();
  }

  private check(): void {
    if (this.stopped || this.poller || !this.options.apps().some((app) => app.pollIntervalMs !== undefined)) return;
    clearInterval(this.timer);
    this.poller = import("../control/poll.ts").then(({ Poller }) => {
      if (this.stopped) return undefined;
      const poller = new Poller(this.options);
      poller.start();
      return poller;
    });
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    const poller = this.poller;
    this.poller = undefined;
    void poller?.then((started) => started?.stop());
  }
}

/**
 * docs/releases.md "Crashes": what a killed deploy left in a releases directory is cleaned up at start, and said.
 * The releases code is loaded only when an app has releases.
 */
/** The cgroups of deploys a dead process left (limits): what still runs in them is killed, and they are removed. */
export async function recoverLimitGroups(apps: ResolvedApp[], logger: { warn(message: string): void }): Promise<void> {
  const limited = apps.filter(
    (app) => app.limits && (app.limits.memory ?? app.limits.cpu ?? app.limits.tasks) !== undefined,
  );
  if (limited.length === 0) return;
  const { removeGroupsLeft } = await import("../steps/limits.ts");
  for (const group of await removeGroupsLeft(limited.map((app) => app.limits!)))
    logger.warn(`removed the cgroup ${group} of a deploy whose process died, and what still ran in it`);
}

export async function recoverAppReleases(
  cwd: string,
  apps: ResolvedApp[],
  logger: { warn(message: string): void },
): Promise<void> {
  const withReleases = apps.filter((app) => app.releases);
  if (withReleases.length === 0) return;
  const [{ recoverReleases }, { layoutOf, releasesPathProblem }] = await Promise.all([
    import("../releases/recovery.ts"),
    import("../releases/files.ts"),
  ]);
  for (const app of withReleases) {
    const who = app.name ? `app ${app.name}: ` : "";
    const problem = releasesPathProblem(app.releases!, app.repoPath);
    if (problem) {
      logger.warn(`${who}${problem}`);
      continue;
    }
    for (const line of await recoverReleases(layoutOf(app.releases!, cwd), app.repoPath, process.env))
      logger.warn(`${who}releases: ${line}`);
  }
}
