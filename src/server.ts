import { consola, type ConsolaInstance } from "consola";
import { ConfigReloader, type ResolvedConfig, type UserConfig } from "./config.ts";
import { Deployer } from "./deploy/pipeline.ts";
import { QueueFullError } from "./deploy/queue.ts";
import { markInterruptedDeploys } from "./deploy/recovery.ts";
import { jsonResponse, jsonResult, streamingResponse } from "./response.ts";
import { ensureWebhookSecret, verifyRequestSecret } from "./secret.ts";

export interface ServiceServerOptions {
  /** @default consola.withTag("service") */
  logger?: ConsolaInstance;
  /** Working directory: config lookup, `.service.secret`, `.service/logs/`. @default process.cwd() */
  cwd?: string;
}

export interface ServiceServer {
  /** Starts listening; generates the secret first if none is configured. */
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

/** Bun cuts idle connections after this; authorized deploy streams are exempt (they send heartbeats instead). */
const IDLE_TIMEOUT_SECONDS = 30;

const NOT_FOUND = { error: "not found", message: "this service accepts POST requests on its webhook path only" };
const SHUTTING_DOWN = { error: "shutting down", message: "the service is stopping and accepts no new deploys" };
const UNAUTHORIZED = {
  error: "unauthorized",
  message: "missing or wrong secret: send it as the X-Service-Secret header or as Authorization: Bearer <secret>",
};

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
  let server: ReturnType<typeof Bun.serve> | undefined;
  let draining = false;

  const handle = (request: Request, bunServer: ReturnType<typeof Bun.serve>): Response | Promise<Response> => {
    if (request.method !== "POST") return jsonResponse(404, NOT_FOUND);
    if (draining) return jsonResponse(503, SHUTTING_DOWN, { "retry-after": "30" });
    const current = reloader.current();
    const url = new URL(request.url);
    if (url.pathname !== current.path) return jsonResponse(404, NOT_FOUND);
    const secret = current.secret ?? config.secret;
    if (!secret || !verifyRequestSecret(request.headers, secret)) return jsonResponse(401, UNAUTHORIZED);

    // An authorized deploy may stay silent for minutes: no idle cut for this request.
    bunServer.timeout(request, 0);
    const wantsJson = url.searchParams.get("format") === "json";
    const stream = wantsJson ? undefined : streamingResponse(current.heartbeatMs);
    let result: Promise<unknown>;
    try {
      const notices = reloader.problem ? [reloader.problem] : [];
      result = deployer.deploy({ config: current, trigger: "webhook", cwd, sink: stream?.sink, notices });
    } catch (error) {
      if (!(error instanceof QueueFullError)) throw error;
      return jsonResponse(429, { error: "queue full", message: `${error.message}; try again later (queueLimit is ${current.queueLimit})` }, { "retry-after": "30" });
    }
    inFlight.add(result);
    result.finally(() => inFlight.delete(result)).catch(() => {});
    return stream ? stream.response : jsonResult(result as ReturnType<typeof deployer.deploy>);
  };

  return {
    async start() {
      if (server) return;
      if (!config.secret) ensureWebhookSecret(config, cwd);
      for (const id of markInterruptedDeploys(cwd)) logger.warn(`deploy ${id} was interrupted by an earlier stop of the service; its log is marked "interrupted"`);
      draining = false;
      const { port, hostname } = reloader.current();
      server = Bun.serve({
        port,
        hostname,
        idleTimeout: IDLE_TIMEOUT_SECONDS,
        development: false,
        fetch: handle,
        error(error) {
          logger.error(`request failed: ${error.message}`);
          return jsonResponse(500, { error: "internal error", message: "the request failed inside the service; see its log" });
        },
      });
    },
    async stop() {
      if (!server) return;
      draining = true;
      deployer.cancelWaiting("the service is shutting down");
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      const current = server;
      server = undefined;
      await current.stop();
    },
    get listening() {
      return server !== undefined;
    },
    get port() {
      return server?.port;
    },
    get url() {
      return server ? `http://localhost:${server.port}` : undefined;
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
