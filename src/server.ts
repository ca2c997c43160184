import { consola, type ConsolaInstance } from "consola";
import { ensureAppSecrets, requestHost, resolveApps, routeRequest, type ResolvedApp } from "./apps.ts";
import type { ResolvedConfig, UserConfig } from "./config-schema.ts";
import { ConfigReloader } from "./reload.ts";
import type { DeployEvent } from "./deploy/events.ts";
import { Deployer } from "./deploy/deployer.ts";
import { QueueFullError } from "./deploy/queue.ts";
import { markInterruptedDeploys } from "./deploy/recovery.ts";
import { settleOutbound } from "./notify/outbound.ts";
import { branchOfPush, readBoundedBody } from "./payload.ts";
import { jsonResponse, jsonResult, streamingResponse } from "./response.ts";
import { runtime } from "#runtime";
import type { Listener, RequestControl } from "./runtime/types.ts";
import { ensureWebhookSecret, hasBodySignature, verifyRequestSecret } from "./secret.ts";

export interface ServiceServerOptions {
  /** @default consola.withTag("service") */
  logger?: ConsolaInstance;
  /** Working directory: config lookup, `.service.secret`, `.service/logs/`. @default process.cwd() */
  cwd?: string;
}

export interface ServiceServer {
  /** Starts listening; generates the secret(s) first if none is configured. */
  start(): Promise<void>;
  /**
   * Stops gracefully: new POSTs get 503, waiting deploys are cancelled (their clients and logs say so), the
   * running ones finish, then the listener closes.
   */
  stop(): Promise<void>;
  readonly listening: boolean;
  /** The port actually listened on (useful with port 0). */
  readonly port: number | undefined;
  /** `http://localhost:<port>` once listening. */
  readonly url: string | undefined;
  /** Resolves when every running and queued deploy has finished. */
  idle(): Promise<void>;
}

/** How long a stopping service waits for commit statuses and notifications still in flight; the rest are recorded as not sent. */
const OUTBOUND_GRACE_MS = 3_000;

/** Bun's own request body limit: see `maxRequestBodySize` below. */
const BODY_BACKSTOP_BYTES = 4 * 1024 ** 3;

/** Idle connections are closed after this; authorized deploy streams are exempt (they send heartbeats instead). */
const IDLE_TIMEOUT_SECONDS = 30;

const NOT_FOUND = Object.freeze({ error: "not found", message: "this service accepts POST requests on its webhook path only" });
const SHUTTING_DOWN = Object.freeze({ error: "shutting down", message: "the service is stopping and accepts no new deploys" });
const UNAUTHORIZED = Object.freeze({
  error: "unauthorized",
  message:
    "missing or wrong secret: send it as X-Service-Secret, Authorization: Bearer <secret> or X-Gitlab-Token, " +
    "or sign the body (X-Hub-Signature-256)",
});

const truthy = (value: string | null) => value !== null && ["", "1", "true", "yes"].includes(value.toLowerCase());

/**
 * The webhook server. `config` is the base of every deploy: on each POST the config file (when there is one)
 * and `SERVICE_*` variables are layered over it again, so edits apply without a restart.
 */
export function createServiceServer(config: UserConfig | ResolvedConfig, options: ServiceServerOptions = {}): ServiceServer {
  const logger = options.logger ?? consola.withTag("service");
  const cwd = options.cwd ?? process.cwd();
  const reloader = new ConfigReloader(config, cwd, logger);
  const deployer = new Deployer();
  const inFlight = new Set<Promise<unknown>>();
  let listener: Listener | undefined;
  let draining = false;
  let lastGoodApps: ResolvedApp[] = [];
  let appsFrom: ResolvedConfig | undefined;

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
    if (!app.secret) return jsonResponse(401, UNAUTHORIZED);

    // The body is read only when a signature covers it or a branch filter needs it, and never past the limit.
    let body: Uint8Array | undefined;
    const signed = hasBodySignature(request.headers);
    if (!signed && !verifyRequestSecret(request.headers, app.secret)) return jsonResponse(401, UNAUTHORIZED);
    if (signed || app.branch) {
      body = await readBoundedBody(request, app.maxBodyBytes);
      if (!body) return jsonResponse(413, { error: "payload too large", message: `the request body is over maxBodyBytes (${app.maxBodyBytes} bytes)` });
    }
    if (signed && !verifyRequestSecret(request.headers, app.secret, body)) return jsonResponse(401, UNAUTHORIZED);

    const wantsJson = url.searchParams.get("format") === "json";
    const pushed = app.branch && body ? branchOfPush(body, request.headers.get("content-type"), app.branch) : undefined;
    if (app.branch && pushed && pushed.branch !== app.branch) {
      const skipped = { skipped: true, ok: true, ref: pushed.ref, branch: app.branch, message: `push to ${pushed.ref}; this app deploys ${app.branch} only` };
      return wantsJson ? jsonResponse(200, skipped) : new Response(`[skipped] ${skipped.message}\n`, { headers: { "content-type": "text/plain; charset=utf-8" } });
    }

    // An authorized deploy may stay silent for minutes: no idle cut for this request.
    control.noTimeout();
    const acknowledge = app.acknowledge || truthy(url.searchParams.get("ack"));
    const stream = wantsJson || acknowledge ? undefined : streamingResponse(app.heartbeatMs);
    const id = crypto.randomUUID();
    let position = 0;
    const sink = (event: DeployEvent) => {
      if (event.type === "queued") position = event.position;
      stream?.sink(event);
    };
    let result: ReturnType<typeof deployer.deploy>;
    try {
      const notices = reloader.problem ? [reloader.problem] : [];
      const secrets = lastGoodApps.map((a) => a.secret ?? "");
      result = deployer.deploy({ id, app: app.name, config: app, trigger: "webhook", cwd, sink, notices, secrets });
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
    if (acknowledge) return acknowledgement(id, position, app, cwd, wantsJson);
    return stream ? stream.response : jsonResult(result);
  };

  return {
    async start() {
      if (listener) return;
      const initial = reloader.current();
      if (initial.apps.length === 0 && !config.secret) ensureWebhookSecret(config, cwd);
      currentApps(initial);
      for (const id of markInterruptedDeploys(cwd)) logger.warn(`deploy ${id} was interrupted by an earlier stop of the service; its log is marked "interrupted"`);
      draining = false;
      listener = await runtime.serve({
        port: initial.port,
        hostname: initial.hostname,
        idleTimeoutSeconds: IDLE_TIMEOUT_SECONDS,
        // Only a backstop: readBoundedBody enforces each app's limit, and answers in JSON naming it. Bun answers a
        // body over this itself (an empty 413, before the handler runs), so it sits far above any app's limit,
        // and above limits raised by a config reload. An unread body is not buffered (Bun applies backpressure).
        maxRequestBodySize: Math.max(BODY_BACKSTOP_BYTES, initial.maxBodyBytes + 1, ...initial.apps.map((a) => (a.maxBodyBytes ?? 0) + 1)),
        fetch: handle,
        error(error) {
          logger.error(`request failed: ${error.message}`);
          return jsonResponse(500, { error: "internal error", message: "the request failed inside the service; see its log" });
        },
      });
    },
    async stop() {
      if (!listener) return;
      draining = true;
      deployer.cancelWaiting("the service is shutting down");
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await settleOutbound(OUTBOUND_GRACE_MS);
      const current = listener;
      listener = undefined;
      await current.stop();
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

/** The opt-in immediate answer: the deploy id and where its logs will be; the deploy runs on. */
function acknowledgement(id: string, position: number, app: ResolvedApp, cwd: string, json: boolean): Response {
  const logs = `${cwd}/.service/logs/*_${id}.{json,log}`;
  const state = position > 0 ? `queued at position ${position}` : "started";
  if (json) return jsonResponse(200, { accepted: true, id, app: app.name ?? null, state, position, logs });
  const lines = [`[accepted] deploy ${id} ${state}`, `[accepted] logs: ${logs}`, `[accepted] follow it with: service logs ${id.slice(0, 8)} --follow`];
  return new Response(`${lines.join("\n")}\n`, { headers: { "content-type": "text/plain; charset=utf-8" } });
}
