import type { ConsolaInstance } from "consola";
import { join } from "node:path";
import { ensurePrivateDir } from "./system/files.ts";
import { defaultLogger } from "./system/logger.ts";
import { boundedPort } from "./system/address.ts";
import { AppsInForce, collectApps } from "./config/apps.ts";
import { ConfigError, type ResolvedConfig, type UserConfig } from "./config/schema.ts";
import { serverControl, type ServerControl } from "./control/actions.ts";
import { Deployer } from "./deploy/deployer.ts";
import { retentionDone } from "./deploy/run.ts";
import { LatestDeploys } from "./queue/latest.ts";
import { pauseNotices } from "./queue/pause.ts";
import { queueKey, scanTickets, ticketDir } from "./queue/tickets.ts";
import { markInterruptedDeploys } from "./queue/recovery.ts";
import { ConfigReloader } from "./config/reload.ts";
import { jsonResponse } from "./http/response.ts";
import { runtime } from "#runtime";
import type { Listener } from "./runtime/types.ts";
import type { DeploySink } from "./types.ts";
import { ensureWebhookSecret, weakSecretWarning } from "./config/secret.ts";
import { deploySecrets } from "./config/deploy-secrets.ts";
import { envFileWarnings } from "./config/env.ts";
import { webhookHandler } from "./http/webhook.ts";
import type { Metrics, QueueDeploy, StartedAdmin } from "./features/admin.ts";
import { LazyOutbound, PollingWhenConfigured, recoverAppReleases } from "./features/optional.ts";

export interface ServiceServerOptions {
  /** @default consola.withTag("service") */
  logger?: ConsolaInstance;
  /** Working directory: config lookup, `.service.secret`, `.service/logs/`. @default process.cwd() */
  cwd?: string;
  /** @internal Tests: poll every this many ms whatever `pollIntervalMs` says (its minimum is 5000). */
  pollEveryMs?: number;
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
 * Creates `.service/` at start: the sign, for `service pause`, `status` and the other control commands run later in
 * this directory, that a service works here even before its first deploy (its settings may all be in the
 * environment). Best effort: a deploy says so when its log directory cannot be made.
 */
function markServiceDir(cwd: string): void {
  try {
    ensurePrivateDir(join(cwd, ".service"));
  } catch {}
}

/** How long a stopping service waits for commit statuses and notifications still in flight. */
const OUTBOUND_GRACE_MS = 3_000;

/** Bun's own request body limit: see `maxRequestBodySize` below. */
const BODY_BACKSTOP_BYTES = 4 * 1024 ** 3;

/** Idle connections are closed after this; authorized deploy streams are exempt (they send heartbeats instead). */
const IDLE_TIMEOUT_SECONDS = 30;

/**
 * The webhook server. `config` is the base of every deploy: on each POST the config file (when there is one)
 * and `SERVICE_*` variables are layered over it again, so edits apply without a restart.
 */
export function createServiceServer(
  config: UserConfig | ResolvedConfig,
  options: ServiceServerOptions = {},
): ServiceServer {
  const logger = options.logger ?? defaultLogger();
  const cwd = options.cwd ?? process.cwd();
  const reloader = new ConfigReloader(config, cwd, logger);
  // Its own outbound calls: stopping this server never touches another's (two servers in one process).
  const outbound = new LazyOutbound();
  const deployer = new Deployer({ logger, outbound: outbound.sinks });
  const latest = new LatestDeploys();
  const inFlight = new Set<Promise<unknown>>();
  let listener: Listener | undefined;
  /** The closing of the listeners, once a stop has begun it. */
  let closing: Promise<void> | undefined;
  let draining = false;
  /** The counters: kept only for the admin listener, which shows them. */
  let metrics: Metrics | undefined;
  let admin: StartedAdmin | undefined;
  const appsInForce = new AppsInForce(cwd, () => config.secret, logger);
  /** The apps in force now: the configuration and secret files looked at (not a request's hot path). */
  const apps = () => appsInForce.of(reloader.current(true), true);
  /** Every secret a deploy's output and the admin API's answers must not carry (as `service deploy` builds it). */
  const secrets = () =>
    deploySecrets(
      { adminToken: admin?.token() ?? reloader.current().adminToken },
      appsInForce.lastGood,
      cwd,
      process.env,
    );

  const track = (id: string, result: Promise<unknown>, onError?: (error: Error) => void) => {
    inFlight.add(result);
    result
      .catch((error: Error) => {
        logger.error(`deploy ${id} failed inside the service: ${error.message}`);
        onError?.(error);
      })
      .finally(() => inFlight.delete(result));
  };

  /** A deploy the service starts itself (admin API, poll; with a target, the API's rollback or a ref): its result is only logged. */
  const queueDeploy: QueueDeploy = (app, request) => {
    const { trigger, actor, target, force } = request;
    const id = crypto.randomUUID();
    let position = 0;
    const observed: DeploySink = (event) => {
      if (event.type === "queued") position = event.position;
    };
    const sink = metrics ? metrics.observe(app.name ?? "default", observed) : observed;
    const notices = reloader.problem ? [reloader.problem] : [];
    const deploy = { id, app: app.name, config: app, trigger, actor, cwd, sink, notices, secrets: secrets() };
    track(id, deployer.deploy({ ...deploy, ...(target ? { target } : {}) }, { force }));
    return { id, position };
  };

  const polling = new PollingWhenConfigured({
    cwd,
    logger,
    everyMs: options.pollEveryMs,
    apps,
    // The queue's tickets: this process's deploys of the repository and every other process's (`service deploy`).
    busy: (app) => scanTickets(ticketDir(queueKey(app.repoPath))).live.length > 0,
    deploy: (app) => void queueDeploy(app, { trigger: "poll", actor: "poll" }),
    counted: (app, result) => metrics?.pollEnded(app, result),
  });

  /** The second listener, when `adminPort` is set: loaded only then. */
  const openAdmin = async (initial: ResolvedConfig) => {
    const { startAdmin } = await import("./features/admin.ts");
    admin = await startAdmin(initial, {
      cwd,
      logger,
      metrics: metrics!,
      apps,
      trustProxy: () => reloader.current().trustProxy,
      draining: () => draining,
      waiting: (app) => deployer.queue.waiting(queueKey(app.repoPath)),
      queueDeploy,
      secrets,
    });
  };

  return {
    ...serverControl({ cwd, deployer, apps, secrets, track }),
    async start() {
      if (listener) return;
      const initial = reloader.current(true);
      // Two apps in one releases directory would switch and prune each other's releases (docs/releases.md).
      const { clashes } = collectApps(initial, cwd);
      if (clashes.length > 0) throw new ConfigError(clashes);
      // Also refuses a configured secret too short to use (or blank), instead of a server that answers 404 or 401.
      if (initial.apps.length === 0) ensureWebhookSecret(config, cwd);
      const first = appsInForce.of(initial, true);
      for (const app of first) {
        const weak = app.secret && weakSecretWarning(app.secret, app.name);
        if (weak) logger.warn(weak);
        for (const warning of envFileWarnings(app, app.repoPath, cwd, app.name)) logger.warn(warning);
      }
      for (const line of pauseNotices(
        cwd,
        first.map((a) => a.name),
      ))
        logger.warn(line);
      markServiceDir(cwd);
      for (const id of markInterruptedDeploys(cwd, logger))
        logger.warn(`deploy ${id} was interrupted by an earlier stop of the service; its log is marked "interrupted"`);
      await recoverAppReleases(cwd, first, logger);
      draining = false;
      if (initial.adminPort !== undefined) metrics ??= new (await import("./features/admin.ts")).Metrics();
      listener = await runtime.serve({
        port: initial.port,
        hostname: initial.hostname,
        bounded: boundedPort(initial.hostname, initial.boundConnections),
        idleTimeoutSeconds: IDLE_TIMEOUT_SECONDS,
        // Only a backstop: readBody (body.ts) enforces each app's limit, and answers in JSON naming it. Bun answers a
        // body over this itself (an empty 413, before the handler runs), so it sits far above any app's limit,
        // and above limits raised by a config reload. An unread body is not buffered (Bun applies backpressure).
        maxRequestBodySize: Math.max(
          BODY_BACKSTOP_BYTES,
          initial.maxBodyBytes + 1,
          ...initial.apps.map((a) => (a.maxBodyBytes ?? 0) + 1),
        ),
        fetch: webhookHandler({
          cwd,
          reloader,
          routes: (current) => {
            appsInForce.of(current);
            return appsInForce.routes;
          },
          lookAtSecret: (app) => appsInForce.lookAtSecret(app),
          deployer,
          latest,
          metrics,
          draining: () => draining,
          secrets,
          track,
          logger,
        }),
        error(error) {
          logger.error(`request failed: ${error.message}`);
          return jsonResponse(500, {
            error: "internal error",
            message: "the request failed inside the service; see its log",
          });
        },
      });
      try {
        if (initial.adminPort !== undefined) await openAdmin(initial);
      } catch (error) {
        const current = listener;
        listener = undefined;
        await current.stop();
        if ((error as NodeJS.ErrnoException).code === "EADDRINUSE")
          throw new Error(
            `the admin port ${initial.adminPort} is already in use: choose another with SERVICE_ADMIN_PORT or the adminPort key`,
            { cause: error },
          );
        throw error;
      }
      polling.start();
    },
    async stop(options: StopOptions = {}) {
      // A stop while another closes the listeners waits for it: the last bytes of the streams are still relayed.
      if (!listener) return closing;
      draining = true;
      polling.stop();
      deployer.cancelWaiting("the service is shutting down");
      if (options.force) deployer.processes.stopAll("SIGKILL");
      try {
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      } finally {
        if (options.force) deployer.processes.resume();
      }
      // Commit statuses and notifications still in flight get a short grace; the rest are recorded as not sent.
      await outbound.settle(options.force ? 0 : OUTBOUND_GRACE_MS);
      // The retention of the deploys that ended (it runs after their `[done]` lines).
      await retentionDone();
      // A forced stop may come while a graceful one waits: the first to get here closes the listener.
      const current = listener;
      if (!current) return closing;
      listener = undefined;
      closing = (async () => {
        await current.stop();
        // Last: /healthz answers 503 for as long as the service drains.
        const adminListener = admin?.listener;
        admin = undefined;
        await adminListener?.stop();
        reloader.close();
        appsInForce.close();
      })();
      await closing;
    },
    get listening() {
      return listener !== undefined;
    },
    get port() {
      return listener?.port;
    },
    get url() {
      return listener ? `http://localhost:${listener.port}` : undefined;
    },
    get adminUrl() {
      return admin?.url;
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await retentionDone();
    },
  };
}
