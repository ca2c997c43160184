import { defaultLogger, type Logger } from "./system/logger.ts";
import { AppsInForce } from "./config/apps.ts";
import { appsToStart } from "./config/start.ts";
import type { ResolvedConfig } from "./config/schema-resolved.ts";
import type { UserConfig } from "./config/schema.ts";
import { serverControl, type ServerControl } from "./control/actions.ts";
import { Deployer } from "./deploy/deployer.ts";
import { retentionDone } from "./deploy/after-done.ts";
import { LatestDeploys } from "./queue/latest.ts";
import { queueKey } from "./queue/tickets.ts";
import { ConfigReloader } from "./config/reload.ts";
import { openWebhookPort, type WebhookPort } from "./http/listen.ts";
import { webhookHandler } from "./http/webhook.ts";
import type { Listener } from "./runtime/types.ts";
import { deploySecrets } from "./config/deploy-secrets.ts";
import type { Metrics, StartedAdmin } from "./features/admin.ts";
import { AuditTrail } from "./audit/trail.ts";
import type { AuditEvent } from "./audit/entry.ts";
import { ServerPreviews } from "./features/previews.ts";
import { LazyOutbound, PollingWhenConfigured } from "./features/optional.ts";
import { busy, ServerRequests } from "./features/requests.ts";
import { drain } from "./features/drain.ts";

export interface ServiceServerOptions {
  /** @default consola.withTag("service") */
  logger?: Logger;
  /** Working directory: config lookup, `.service.secret`, `.service/logs/`. @default process.cwd() */
  cwd?: string;
  /** @internal Tests: poll every this many ms whatever `pollIntervalMs` says (its minimum is 5000). */
  pollEveryMs?: number;
  /** @internal The webhook port, opened by the serve command before this server loaded (else `start` opens it). */
  webhookPort?: WebhookPort;
}

/** Besides these, `rollback`, `status`, `cancel`, `pause` and `resume` (control.ts). */
export interface ServiceServer extends ServerControl {
  /** Starts listening; generates the secret(s) first if none is configured. */
  start(): Promise<void>;
  /**
   * Stops gracefully: new POSTs get 503, waiting deploys are cancelled (their clients and logs say so), the
   * running ones finish, then the listener closes. With `force`, the running deploys' process trees are
   * killed (SIGKILL) instead: those deploys end failed, and their logs are complete.
   */
  stop(options?: StopOptions): Promise<void>;
  readonly listening: boolean;
  /** The port actually listened on (useful with port 0). */
  readonly port: number | undefined;
  /** `http://localhost:<port>` once listening. */
  readonly url: string | undefined;
  /** The admin listener's URL once listening; undefined when `adminPort` is unset. */
  readonly adminUrl: string | undefined;
  /** Resolves when every running and queued deploy has finished. */
  idle(): Promise<void>;
}

export interface StopOptions {
  /** Kill the running deploys' process trees instead of waiting for them. @default false */
  force?: boolean;
}

/**
 * The webhook server. `config` is the base of every deploy: on each POST the config file (when there is one)
 * and `SERVICE_*` variables are layered over it again, so edits apply without a restart.
 */
export function createServiceServer(
  config: UserConfig | ResolvedConfig,
  options: ServiceServerOptions = {},
): ServiceServer {
  const server = new Server(config, options);
  const { cwd, deployer } = server;
  return {
    ...serverControl({
      cwd,
      deployer,
      apps: server.apps,
      secrets: server.secrets,
      track: server.track,
      audit: server.audit,
    }),
    start: () => server.start(),
    stop: (stopOptions) => server.stop(stopOptions),
    get listening() {
      return server.listener !== undefined;
    },
    get port() {
      return server.listener?.port;
    },
    get url() {
      return server.listener ? `http://localhost:${server.listener.port}` : undefined;
    },
    get adminUrl() {
      return server.admin?.url;
    },
    idle: () => server.idle(),
  };
}

/** One server's parts, and the steps of its start and its stop. */
class Server {
  readonly logger: Logger;
  readonly cwd: string;
  private readonly reloader: ConfigReloader;
  /** Its own outbound calls: stopping this server never touches another's (two servers in one process). */
  private readonly outbound = new LazyOutbound((told) => {
    this.metrics?.notified(told.app, told.format, told.ok);
    if (!told.ok) this.logger.warn(`deploy ${told.id}: notification ${told.label} failed: ${told.detail}`);
  });
  readonly deployer: Deployer;
  private readonly latest = new LatestDeploys();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly appsInForce: AppsInForce;
  private readonly polling: PollingWhenConfigured;
  private readonly requests: ServerRequests;
  listener: Listener | undefined;
  /** The webhook port opened before this server, until `start` answers on it. */
  private openedPort: WebhookPort | undefined;
  /** The closing of the listeners, once a stop has begun it. */
  private closing: Promise<void> | undefined;
  private draining = false;
  /** The counters: kept only for the admin listener, which shows them. */
  private metrics: Metrics | undefined;
  /** The previews of pull requests, when an app sets `previews` (docs/previews.md). */
  private readonly previews: ServerPreviews;
  admin: StartedAdmin | undefined;

  constructor(
    private readonly config: UserConfig | ResolvedConfig,
    options: ServiceServerOptions,
  ) {
    this.logger = options.logger ?? defaultLogger();
    this.cwd = options.cwd ?? process.cwd();
    this.openedPort = options.webhookPort;
    this.reloader = new ConfigReloader(config, this.cwd, this.logger);
    this.reloader.onChange = (keys) => this.audit({ actor: "service", action: "config reloaded", keys, outcome: "ok" });
    this.deployer = new Deployer({ logger: this.logger, outbound: this.outbound.sinks });
    this.appsInForce = new AppsInForce(this.cwd, () => config.secret, this.logger);
    this.polling = new PollingWhenConfigured({
      cwd: this.cwd,
      logger: this.logger,
      everyMs: options.pollEveryMs,
      apps: this.apps,
      // The queue's tickets: this process's deploys of the repository and every other process's (`service deploy`).
      busy,
      deploy: (app, asked) => void this.requests.queue(app, { trigger: "poll", actor: "poll", ...asked }),
      counted: (app, result) => this.metrics?.pollEnded(app, result),
      skippedPush: (app, reason) => this.metrics?.skippedPush(app, reason),
    });
    this.requests = new ServerRequests({
      cwd: this.cwd,
      logger: this.logger,
      deployer: this.deployer,
      apps: this.apps,
      metrics: () => this.metrics,
      notices: () => (this.reloader.problem ? [this.reloader.problem] : []),
      secrets: this.secrets,
      track: this.track,
      audit: this.audit,
    });
    this.previews = new ServerPreviews({ cwd: this.cwd, logger: this.logger, apps: this.apps, audit: this.audit });
  }

  /** The apps in force now: the configuration and secret files looked at (not a request's hot path). */
  readonly apps = () => this.appsInForce.of(this.reloader.current(true), true);

  /** Every secret a deploy's output and the admin API's answers must not carry (as `service deploy` builds it). */
  readonly secrets = () => [
    ...deploySecrets(
      { ...this.reloader.current(), adminToken: this.admin?.token() ?? this.reloader.current().adminToken },
      this.appsInForce.lastGood,
      this.cwd,
      process.env,
    ),
    ...(this.admin?.tokenValues() ?? []),
  ];

  /** Writes a line of the audit trail (docs/audit.md); one that cannot be written is a warning. */
  readonly audit = (event: AuditEvent) =>
    new AuditTrail(this.cwd, { keepDays: this.reloader.current().audit?.keepDays }).record(event, (line) =>
      this.logger.warn(line),
    );

  /** Keeps a started deploy until it ends: a stop waits for it. */
  readonly track = (id: string, result: Promise<unknown>, onError?: (error: Error) => void) => {
    this.inFlight.add(result);
    result
      .catch((error: Error) => {
        this.logger.error(`deploy ${id} failed inside the service: ${error.message}`);
        onError?.(error);
      })
      .finally(() => this.inFlight.delete(result));
  };

  async start(): Promise<void> {
    if (this.listener) return;
    const initial = this.reloader.current(true);
    const apps = appsToStart(initial, this.config, this.cwd, this.appsInForce, this.logger);
    if (initial.adminPort !== undefined) this.metrics ??= new (await import("./features/admin.ts")).Metrics();
    await this.requests.recover(apps);
    await this.previews.open(apps);
    this.draining = false;
    this.deployer.resumeWatches();
    this.listener = await this.answerWebhooks(initial);
    await this.openAdminOrClose(initial);
    this.polling.start();
    await this.requests.watchForCatchUps(apps);
    this.audit({ actor: "service", action: "started", target: `pid ${process.pid}`, outcome: "ok" });
  }

  /** The webhook port (the one the serve command opened, once): the routes of docs/http.md and nothing else. */
  private async answerWebhooks(initial: ResolvedConfig): Promise<Listener> {
    const port = this.openedPort ?? (await openWebhookPort(initial, this.logger));
    this.openedPort = undefined;
    port.answerWith(
      webhookHandler({
        cwd: this.cwd,
        reloader: this.reloader,
        routes: (current) => {
          this.appsInForce.of(current);
          return this.appsInForce.routes;
        },
        lookAtSecret: (app) => this.appsInForce.lookAtSecret(app),
        deployer: this.deployer,
        latest: this.latest,
        metrics: this.metrics,
        draining: () => this.draining,
        secrets: this.secrets,
        track: this.track,
        logger: this.logger,
        // An app given previews by a reload opens them at its first delivery.
        previews: async (app, headers, payload) => (await this.previews.open([app]))?.entrance(app, headers, payload),
      }),
    );
    return port.listener;
  }

  /** The second listener, when `adminPort` is set (loaded only then); the webhook port closes again if it cannot open. */
  private async openAdminOrClose(initial: ResolvedConfig): Promise<void> {
    if (initial.adminPort === undefined) return;
    try {
      const { startAdmin } = await import("./features/admin.ts");
      this.admin = await startAdmin(initial, {
        cwd: this.cwd,
        logger: this.logger,
        metrics: this.metrics!,
        apps: this.apps,
        trustProxy: () => this.reloader.current().trustProxy,
        config: () => this.reloader.current(),
        draining: () => this.draining,
        waiting: (app) => this.deployer.queue.waiting(queueKey(app.repoPath)),
        queueDeploy: this.requests.queue,
        secrets: this.secrets,
        audit: this.audit,
        previews: () => this.previews.current,
      });
    } catch (error) {
      const current = this.listener!;
      this.listener = undefined;
      await current.stop();
      throw error;
    }
  }

  async stop(options: StopOptions = {}): Promise<void> {
    // A stop while another closes the listeners waits for it: the last bytes of the streams are still relayed.
    if (!this.listener) return this.closing;
    // New POSTs get 503 while it drains (features/drain.ts).
    this.draining = true;
    const { deployer, polling, requests, outbound } = this;
    await drain(
      { deployer, polling, requests, outbound, settleDeploys: () => this.settleDeploys() },
      options.force === true,
    );
    // A forced stop may come while a graceful one waits: the first to get here closes the listener.
    const current = this.listener;
    if (!current) return this.closing;
    this.listener = undefined;
    this.closing = this.close(current);
    await this.closing;
  }

  /** The listeners closed, the admin listener last: /healthz answers 503 for as long as the service drains. */
  private async close(webhook: Listener): Promise<void> {
    await webhook.stop();
    const adminListener = this.admin?.listener;
    this.admin = undefined;
    await adminListener?.stop();
    await this.previews.stop();
    this.audit({ actor: "service", action: "stopped", target: `pid ${process.pid}`, outcome: "ok" });
    this.reloader.close();
    this.appsInForce.close();
  }

  private async settleDeploys(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  async idle(): Promise<void> {
    await this.settleDeploys();
    await retentionDone();
  }
}
