import { consola, type ConsolaInstance } from "consola";
import { ensureAdminToken } from "./admin/auth.ts";
import { startAdminListener, type AdminListener } from "./admin/listener.ts";
import { Metrics } from "./admin/metrics.ts";
import { ensureAppSecrets, requestHost, resolveApps, routeRequest, type ResolvedApp } from "./apps.ts";
import type { ResolvedConfig, UserConfig } from "./config-schema.ts";
import { serverControl, type ServerControl } from "./control.ts";
import { ConfigReloader } from "./reload.ts";
import type { DeployEvent, RollbackTarget } from "./deploy/events.ts";
import { deployControls, type DeployControls } from "./deploy/control.ts";
import { Deployer } from "./deploy/deployer.ts";
import { LatestDeploys } from "./deploy/latest.ts";
import { QueueFullError, queueKey } from "./deploy/queue.ts";
import { markInterruptedDeploys } from "./deploy/recovery.ts";
import { settleOutbound } from "./notify/outbound.ts";
import { pausedResponse, pauseNotices } from "./deploy/pause.ts";
import { forgeDelivery, skippedResponse, skipReason } from "./forge-event.ts";
import { BODY_READ_DEADLINE_MS, ByteBudget, declaredLength, readBody, UNAUTHENTICATED_BODY_BUDGET_BYTES, type BodyRead } from "./body.ts";
import { jsonResponse, jsonResult, streamingResponse } from "./response.ts";
import { runtime } from "#runtime";
import type { Listener, RequestControl } from "./runtime/types.ts";
import { bodySigner, ensureWebhookSecret, hasBodySignature, verifyRequestSecret, weakSecretWarning } from "./secret.ts";
import { clientAddress, FailureThrottle } from "./throttle.ts";

export interface ServiceServerOptions {
  /** @default consola.withTag("service") */
  logger?: ConsolaInstance;
  /** Working directory: config lookup, `.service.secret`, `.service/logs/`. @default process.cwd() */
  cwd?: string;
}

/** Besides these, `rollback` and `status` (see control.ts), `cancel`, `pause` and `resume` (see deploy/control.ts). */
export interface ServiceServer extends ServerControl, DeployControls {
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

/** How long a stopping service waits for commit statuses and notifications still in flight. */
const OUTBOUND_GRACE_MS = 3_000;

/** Bun's own request body limit: see `maxRequestBodySize` below. */
const BODY_BACKSTOP_BYTES = 4 * 1024 ** 3;

/** Idle connections are closed after this; authorized deploy streams are exempt (they send heartbeats instead). */
const IDLE_TIMEOUT_SECONDS = 30;

const NOT_FOUND = Object.freeze({ error: "not found", message: "this service accepts POST requests on its webhook path only" });
const SHUTTING_DOWN = Object.freeze({ error: "shutting down", message: "the service is stopping and accepts no new deploys" });

const BUSY = Object.freeze({
  error: "busy",
  message: `too many signed request bodies are being read at once (${UNAUTHENTICATED_BODY_BUDGET_BYTES / 1024 ** 2} MiB budget); try again later`,
});
const TIMED_OUT = Object.freeze({ error: "request timeout", message: `the request body did not arrive within ${BODY_READ_DEADLINE_MS / 1000} s` });
const GONE = Object.freeze({ error: "connection closed", message: "the connection closed before the deploy was accepted; nothing was deployed" });

const truthy = (value: string | null) => value !== null && ["", "1", "true", "yes"].includes(value.toLowerCase());

/**
 * The webhook server. `config` is the base of every deploy: on each POST the config file (when there is one)
 * and `SERVICE_*` variables are layered over it again, so edits apply without a restart.
 */
export function createServiceServer(config: UserConfig | ResolvedConfig, options: ServiceServerOptions = {}): ServiceServer {
  const logger = options.logger ?? consola.withTag("service");
  const cwd = options.cwd ?? process.cwd();
  const reloader = new ConfigReloader(config, cwd, logger);
  const deployer = new Deployer({ logger });
  const latest = new LatestDeploys();
  const inFlight = new Set<Promise<unknown>>();
  const unauthenticatedBodies = new ByteBudget(UNAUTHENTICATED_BODY_BUDGET_BYTES);
  let listener: Listener | undefined;
  let draining = false;
  let lastGoodApps: ResolvedApp[] = [];
  let appsFrom: ResolvedConfig | undefined;
  const throttle = new FailureThrottle();
  const metrics = new Metrics();
  let admin: AdminListener | undefined;
  let adminToken: string | undefined;
  let adminUrl: string | undefined;
  /** The app each webhook request was routed to, for its status counter. */
  const routedTo = new WeakMap<Request, string>();
  /** Every secret a deploy's output and the admin API's answers must not carry. */
  const secrets = () => [...lastGoodApps.map((a) => a.secret ?? ""), adminToken ?? ""];

  /**
   * The apps in force, resolved again only when the configuration changed (so a flood of requests reads no
   * secret files); a list that became invalid keeps the last good one.
   */
  const currentApps = (current: ResolvedConfig): ResolvedApp[] => {
    // The reloader hands out the same object while the configuration stays the same.
    if (current === appsFrom) return lastGoodApps;
    appsFrom = current;
    try {
      const apps = resolveApps(current, cwd);
      if (current.apps.length === 0) apps[0]!.secret ??= config.secret;
      for (const added of ensureAppSecrets(apps, cwd)) {
        if (added.generated) logger.info(`generated a secret for app "${added.name}" in ${added.file}`);
      }
      lastGoodApps = apps;
    } catch (error) {
      logger.warn(`${(error as Error).message}; keeping the last good list of apps`);
    }
    return lastGoodApps;
  };

  const handle = async (request: Request, control: RequestControl): Promise<Response> => {
    if (request.method !== "POST") return jsonResponse(404, NOT_FOUND);
    if (draining) return jsonResponse(503, SHUTTING_DOWN, { "retry-after": "30" });
    const current = reloader.current();
    const url = requestUrl(request);
    if (!url) return jsonResponse(404, NOT_FOUND);
    const app = routeRequest(currentApps(current), url.pathname, () => requestHost(request, current.trustProxy));
    if (!app) return jsonResponse(404, NOT_FOUND);
    routedTo.set(request, app.name ?? "default");
    // The secret is checked before the client's failures are counted: a right one is never slowed.
    const refuse = () => throttle.refuse(clientAddress(request.headers, control.remoteAddress, current.trustProxy));
    if (!app.secret) return refuse();

    const tooLarge = { error: "payload too large", message: `the request body is over maxBodyBytes (${app.maxBodyBytes} bytes)` };
    // Refused before any work, whatever the credentials: a deploy whose client then gets a broken pipe could not tell.
    if ((declaredLength(request) ?? 0) > app.maxBodyBytes) return jsonResponse(413, tooLarge);

    // The body is read only when a signature covers it or a branch filter needs it. A signed request is not
    // authenticated until it is read: its read is charged to the shared budget, and the body is kept only when
    // something needs it whole (otherwise it is hashed as it streams in).
    const signed = hasBodySignature(request.headers);
    if (!signed && !verifyRequestSecret(request.headers, app.secret)) return refuse();
    let body: Uint8Array | undefined;
    if (signed || app.branch) {
      const signer = signed ? bodySigner(request.headers, app.secret) : undefined;
      const read = await readBody(request, { limit: app.maxBodyBytes, keep: Boolean(app.branch), budget: signer && unauthenticatedBodies, onChunk: signer?.update });
      if (!read.ok) return refusedBody(read.reason, tooLarge);
      body = read.body;
      const authorized = !signer || verifyRequestSecret(request.headers, app.secret, signer.digests());
      read.release();
      if (!authorized) return refuse();
    }

    const wantsJson = url.searchParams.get("format") === "json";
    const forge = forgeDelivery(request.headers);
    const skip = skipReason(app, forge, body, request.headers.get("content-type"));
    const skipped = skip ? skippedResponse(skip, wantsJson) : pausedResponse(cwd, app.name, wantsJson);
    if (skipped) {
      metrics.deployEnded(app.name ?? "default", "skipped");
      return skipped;
    }

    // Bun 1.4.5 closes a connection when a request is pipelined behind one still being answered, and both are
    // lost. That close happens while the read that brought them is parsed: after one turn of the event loop a
    // request on such a connection is aborted, and is refused before it deploys (its client got no byte).
    await new Promise((resolve) => setImmediate(resolve));
    if (request.signal.aborted) return jsonResponse(400, GONE);

    // An authorized deploy may stay silent for minutes: no idle cut for this request.
    control.noTimeout();
    const acknowledge = app.acknowledge || truthy(url.searchParams.get("ack"));
    const stream = wantsJson || acknowledge ? undefined : streamingResponse(app.heartbeatMs);
    // queuePolicy latest: a deploy waiting for this repository serves this request too (latest.ts).
    const key = `${app.name ?? ""}\0${queueKey(app.repoPath)}`;
    const joined = app.queuePolicy === "latest" ? latest.join(key, forge.delivery, (event) => stream?.sink(event)) : undefined;
    const id = joined?.id ?? crypto.randomUUID();
    let position = joined?.position ?? 0;
    const sink = metrics.observe(app.name ?? "default", (event: DeployEvent) => {
      if (event.type === "queued") position = event.position;
      stream?.sink(event);
      latest.forward(id, event);
    });
    let result: ReturnType<typeof deployer.deploy>;
    if (joined) result = joined.result;
    else try {
      const notices = reloader.problem ? [reloader.problem] : [];
      const served = app.queuePolicy === "latest" ? latest.served(forge.delivery) : undefined;
      result = deployer.deploy({ id, app: app.name, config: app, trigger: "webhook", ...forge, cwd, sink, notices, secrets: secrets(), served });
      if (served && position > 0) latest.offer(key, { id, position, result, served });
    } catch (error) {
      if (!(error instanceof QueueFullError)) throw error;
      return jsonResponse(429, { error: "queue full", message: `${error.message}; try again later (queueLimit is ${app.queueLimit})` }, { "retry-after": "30" });
    }
    inFlight.add(result);
    result
      .catch((error) => {
        logger.error(`deploy ${id} failed inside the service: ${(error as Error).message}`);
        stream?.fail(`internal error: ${(error as Error).message}`);
      })
      .finally(() => inFlight.delete(result));
    // One deploy per connection: a client must not pipeline another request behind a deploy (see above).
    const response = acknowledge ? acknowledgement(id, position, app, cwd, wantsJson) : stream ? stream.response : await jsonResult(result);
    response.headers.set("connection", "close");
    return response;
  };

  /** A deploy asked for through the admin API: answered like an acknowledged webhook. */
  const apiDeploy = (app: ResolvedApp, target?: RollbackTarget): Response => {
    const id = crypto.randomUUID();
    let position = 0;
    const sink = metrics.observe(app.name ?? "default", (event) => {
      if (event.type === "queued") position = event.position;
    });
    let result: Promise<unknown>;
    try {
      const notices = reloader.problem ? [reloader.problem] : [];
      result = deployer.deploy({ id, app: app.name, config: app, trigger: target ? "rollback" : "api", target, cwd, sink, notices, secrets: secrets() });
    } catch (error) {
      if (!(error instanceof QueueFullError)) throw error;
      return jsonResponse(429, { error: "queue full", message: `${error.message}; try again later (queueLimit is ${app.queueLimit})` }, { "retry-after": "30" });
    }
    inFlight.add(result);
    result.catch((error) => logger.error(`deploy ${id} failed inside the service: ${(error as Error).message}`)).finally(() => inFlight.delete(result));
    return acknowledgement(id, position, app, cwd, true);
  };

  /** The second listener, when `adminPort` is set: it reads the same apps, queue and counters. */
  const startAdmin = async (initial: ResolvedConfig) => {
    if (initial.adminPort === undefined) return;
    const ensured = ensureAdminToken(initial.adminToken, cwd);
    if (ensured.generated) logger.info(`generated an admin token in ${ensured.file}`);
    adminToken = ensured.token;
    admin = await startAdminListener({
      port: initial.adminPort,
      hostname: initial.adminHostname,
      token: adminToken,
      logger,
      cwd,
      metrics,
      apps: () => currentApps(reloader.current()),
      trustProxy: () => reloader.current().trustProxy,
      draining: () => draining,
      waiting: (app) => deployer.queue.waiting(queueKey(app.repoPath)),
      deploy: apiDeploy,
      secrets,
    });
    const host = initial.adminHostname;
    adminUrl = `http://${host.includes(":") ? `[${host}]` : host}:${admin.port}/`;
  };

  return {
    ...serverControl({ cwd, deployer, apps: () => currentApps(reloader.current()), secrets, inFlight }),
    ...deployControls(cwd, () => currentApps(reloader.current())),
    async start() {
      if (listener) return;
      const initial = reloader.current();
      // Also refuses a configured secret too short to use (or blank), instead of a server that answers 404 or 401.
      if (initial.apps.length === 0) ensureWebhookSecret(config, cwd);
      for (const app of currentApps(initial)) {
        const weak = app.secret && weakSecretWarning(app.secret, app.name);
        if (weak) logger.warn(weak);
      }
      for (const line of pauseNotices(cwd, currentApps(initial).map((a) => a.name))) logger.warn(line);
      for (const id of markInterruptedDeploys(cwd, logger)) logger.warn(`deploy ${id} was interrupted by an earlier stop of the service; its log is marked "interrupted"`);
      draining = false;
      listener = await runtime.serve({
        port: initial.port,
        hostname: initial.hostname,
        idleTimeoutSeconds: IDLE_TIMEOUT_SECONDS,
        // Only a backstop: readBody (body.ts) enforces each app's limit, and answers in JSON naming it. Bun answers a
        // body over this itself (an empty 413, before the handler runs), so it sits far above any app's limit,
        // and above limits raised by a config reload. An unread body is not buffered (Bun applies backpressure).
        maxRequestBodySize: Math.max(BODY_BACKSTOP_BYTES, initial.maxBodyBytes + 1, ...initial.apps.map((a) => (a.maxBodyBytes ?? 0) + 1)),
        fetch: async (request, control) => {
          const response = await handle(request, control);
          metrics.webhookRequest(routedTo.get(request) ?? "", response.status);
          return response;
        },
        error(error) {
          logger.error(`request failed: ${error.message}`);
          return jsonResponse(500, { error: "internal error", message: "the request failed inside the service; see its log" });
        },
      });
      try {
        await startAdmin(initial);
      } catch (error) {
        const current = listener;
        listener = undefined;
        await current.stop();
        if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") throw new Error(`the admin port ${initial.adminPort} is already in use: choose another with SERVICE_ADMIN_PORT or the adminPort key`, { cause: error });
        throw error;
      }
    },
    async stop(options: StopOptions = {}) {
      if (!listener) return;
      draining = true;
      deployer.cancelWaiting("the service is shutting down");
      if (options.force) deployer.processes.stopAll("SIGKILL");
      try {
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      } finally {
        if (options.force) deployer.processes.resume();
      }
      // Commit statuses and notifications still in flight get a short grace; the rest are recorded as not sent.
      await settleOutbound(options.force ? 0 : OUTBOUND_GRACE_MS);
      // A forced stop may come while a graceful one waits: the first to get here closes the listener.
      const current = listener;
      if (!current) return;
      listener = undefined;
      await current.stop();
      // Last: /healthz answers 503 for as long as the service drains.
      const adminListener = admin;
      admin = undefined;
      await adminListener?.stop();
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
      return admin ? adminUrl : undefined;
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

/**
 * The request's URL. Bun builds `request.url` from the Host header, so a request with an empty or malformed
 * Host (`Host: [::1`, `Host: a b`, `Host: x:99999`, HTTP/1.0 without one) has a relative or unparsable URL:
 * `new URL` would throw and the request end in a 500. Only the path and query are used from it.
 */
function requestUrl(request: Request): URL | undefined {
  try {
    return new URL(request.url);
  } catch {}
  const target = request.url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, "");
  try {
    return new URL(`http://localhost${target.startsWith("/") ? target : `/${target}`}`);
  } catch {
    return undefined;
  }
}

/** The answer to a body that could not be read. */
function refusedBody(reason: Exclude<BodyRead, { ok: true }>["reason"], tooLarge: object): Response {
  if (reason === "too large") return jsonResponse(413, tooLarge);
  if (reason === "busy") return jsonResponse(503, BUSY, { "retry-after": "30" });
  // The rest of a trickling body is not waited for: the connection closes with the answer.
  if (reason === "timeout") return jsonResponse(408, TIMED_OUT, { connection: "close" });
  return jsonResponse(400, GONE);
}

/** The opt-in immediate answer: the deploy id and where its logs will be; the deploy runs on. */
function acknowledgement(id: string, position: number, app: ResolvedApp, cwd: string, json: boolean): Response {
  const logs = `${cwd}/.service/logs/*_${id}.{json,log}`;
  const state = position > 0 ? `queued at position ${position}` : "started";
  if (json) return jsonResponse(200, { accepted: true, id, app: app.name ?? null, state, position, logs });
  const lines = [`[accepted] deploy ${id} ${state}`, `[accepted] logs: ${logs}`, `[accepted] follow it with: service logs ${id.slice(0, 8)} --follow`];
  return new Response(`${lines.join("\n")}\n`, { headers: { "content-type": "text/plain; charset=utf-8" } });
}
