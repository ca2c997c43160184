import type { ConsolaInstance } from "consola";
import { pauseOf } from "../queue/pause.ts";
import { slotsStatus } from "../control/status.ts";
import { readBody } from "../http/body.ts";
import { requestUrl } from "../http/request-url.ts";
import { jsonResponse } from "../http/response.ts";
import { runtime } from "#runtime";
import type { Listener, RequestControl } from "../runtime/types.ts";
import { clientAddress, clientKey, FailureThrottle } from "../http/throttle.ts";
import {
  apiError,
  appName,
  deployRecord,
  Follows,
  forbidden,
  listApps,
  listDeployments,
  whoami,
  type AdminContext,
} from "./api.ts";
import { appStatsAnswer } from "./app-api.ts";
import { cancelAction, deployAction, pauseAction, resumeAction, rollbackAction } from "./actions.ts";
import { oneLine } from "../system/actor.ts";
import { dashboardAsset, dashboardPage, dashboardRoute, loginPage } from "./pages.ts";
import { isLoopback } from "../system/address.ts";
import { AdminAuth, crossSite } from "./auth.ts";
import type { TokenSet } from "../tokens/list.ts";
import { actorName, refusal, sees, type Action, type Scope } from "../tokens/scope.ts";

/** Largest body of a POST to the admin listener (`/login` carries one short field, an API action a small JSON object). */
export const MAX_ADMIN_BODY_BYTES = 4096;

/** Longest label a dashboard login may give itself (the name shown in the history). */
const MAX_LABEL_CHARS = 40;

/** Idle connections are closed after this; follow streams are exempt. */
const IDLE_TIMEOUT_SECONDS = 30;

const UNAUTHORIZED = Object.freeze({
  error: "unauthorized",
  message: "missing or wrong admin token: send Authorization: Bearer <admin token>, or log in",
});
const CROSS_SITE = Object.freeze({
  error: "cross-site request",
  message: "this request came from another site's page and is refused",
});
const NOT_FOUND = Object.freeze({ error: "not found", message: "no such admin endpoint" });

export interface AdminOptions extends AdminContext {
  port: number;
  hostname: string;
  /** Count the connections and close the ones past the bounds (`boundedPort`). */
  bounded: boolean;
  /** The admin token; a function when it may change while the listener runs (a rotated token file). */
  token: string | (() => string);
  /** The tokens scoped to a role and apps (`tokens`), their values following their files. */
  tokens?: TokenSet;
  logger: ConsolaInstance;
}

export interface AdminListener {
  port: number;
  /** Ends the follow streams, then closes. */
  stop(): Promise<void>;
}

/** The second, optional listener: `/healthz`, `/metrics`, `/api/`, `/login`, `/logout` and the dashboard. */
export async function startAdminListener(options: AdminOptions): Promise<AdminListener> {
  const auth = new AdminAuth(options.token, options.tokens);
  const throttle = new FailureThrottle();
  const follows = new Follows();
  const openMetrics = isLoopback(options.hostname);

  const handle = async (request: Request, control: RequestControl): Promise<Response> => {
    const url = requestUrl(request);
    if (!url) return apiError(400, "bad request", "the request's URL cannot be read");
    const path = url.pathname;
    const method = request.method;
    const trustProxy = options.trustProxy();
    const client = () => clientAddress(request.headers, () => control.remoteAddress(request), trustProxy);
    /** A wrong token or session is counted like a wrong webhook secret; a missing one answers 401 alone. */
    const refuse = () => (auth.presented(request) ? throttle.refuse(client()) : jsonResponse(401, UNAUTHORIZED));
    /**
     * A client over its failure budget has no credential checked, the right one included, until its backoff
     * ends: else each guess would still learn yes or no. A request without any is answered as always.
     */
    const throttled = (presented = auth.presented(request)) => (presented ? throttle.throttled(client()) : undefined);
    const secure =
      trustProxy && request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase() === "https";

    if (path === "/healthz" && method === "GET") {
      return options.draining()
        ? new Response("shutting down\n", { status: 503 })
        : new Response("ok\n", { headers: { "content-type": "text/plain; charset=utf-8" } });
    }
    if (method === "POST" && crossSite(request, trustProxy)) return jsonResponse(403, CROSS_SITE);

    if (path === "/login" && method === "POST") {
      const blocked = throttled(true);
      if (blocked)
        return request.headers.get("accept")?.includes("text/html") ? loginAgain("./", blocked, "") : blocked;
      // Within the size limit and the read deadline every body has: a login form is not authenticated yet.
      const read = await readBody(request, { limit: MAX_ADMIN_BODY_BYTES, keep: true });
      if (!read.ok)
        return apiError(
          read.reason === "too large" ? 413 : 408,
          read.reason,
          `the login form could not be read (${read.reason}; at most ${MAX_ADMIN_BODY_BYTES} bytes)`,
        );
      read.release();
      const form = new URLSearchParams(Buffer.from(read.body ?? new Uint8Array()).toString("utf8"));
      const token = form.get("token") ?? "";
      const opened = auth.open(token);
      if (!opened) {
        const refused = token ? throttle.refuse(client()) : jsonResponse(401, UNAUTHORIZED);
        // A browser's form gets the form again, saying why; a script gets the JSON.
        if (!request.headers.get("accept")?.includes("text/html")) return refused;
        return loginAgain("./", refused, "Wrong admin token.");
      }
      // The name given at login labels what this session does in the history: `admin:alice@<address>`.
      const label = oneLine(form.get("label"), MAX_LABEL_CHARS)?.replace(/@/g, "-");
      return new Response(null, {
        status: 303,
        headers: { location: "./", "set-cookie": auth.login(secure, Date.now(), label, opened) },
      });
    }
    if (path === "/logout" && method === "POST") {
      return new Response(null, {
        status: 303,
        headers: { location: "./", "set-cookie": auth.logout(request, secure) },
      });
    }
    const asset = method === "GET" ? dashboardAsset(path) : undefined;
    if (asset) return asset;
    const page = method === "GET" ? dashboardRoute(path) : undefined;
    if (page) {
      const blocked = throttled();
      if (blocked) return loginAgain(page.root, blocked, "");
      if (auth.authorized(request)) {
        // An app page names one of the config's apps, and one the token sees; any other is not found.
        const scope = page.app === undefined ? undefined : auth.scope(request);
        const seen = (name: string) => !!scope && sees(scope, name) && options.apps().some((a) => appName(a) === name);
        if (page.app !== undefined && !seen(page.app)) return jsonResponse(404, NOT_FOUND);
        return dashboardPage(page);
      }
      if (!auth.presented(request)) return loginPage(page.root);
      // A wrong Bearer token or a stale session: counted like on the API (else the pages answer guesses
      // unthrottled), and the stale cookie cleared so a browser stops sending it.
      const form = loginAgain(page.root, throttle.refuse(client()), "");
      const clear = auth.clearStale(request, secure);
      if (clear) form.headers.set("set-cookie", clear);
      return form;
    }
    if (path === "/metrics" && method === "GET") {
      // A request a proxy forwarded comes from anywhere, whatever address the listener is on.
      const proxied = ["x-forwarded-for", "forwarded", "x-real-ip"].some((name) => request.headers.has(name));
      if (!openMetrics || proxied) {
        const blocked = throttled();
        if (blocked) return blocked;
        if (!auth.authorized(request)) return refuse();
      }
      // A token scoped to apps is shown its apps' counters only; open metrics (no token) show every app's.
      const scope = auth.presented(request) ? auth.scope(request) : undefined;
      const only = scope?.apps ? { app: (name: string) => sees(scope, name), token: scope.name } : undefined;
      const inForce = options.apps();
      const apps = inForce
        .filter((app) => !only || only.app(appName(app)))
        .map((app) => ({
          name: appName(app),
          waiting: options.waiting(app),
          paused: !!pauseOf(options.cwd, app.name),
        }));
      const slots = slotsStatus(options.cwd, inForce[0]?.maxConcurrentDeploys ?? 0);
      return new Response(options.metrics.render(apps, slots, only), {
        headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
      });
    }
    if (!path.startsWith("/api/")) return jsonResponse(404, NOT_FOUND);
    const blocked = throttled();
    if (blocked) return blocked;
    const scope = auth.scope(request);
    if (!scope) return refuse();
    // Who acts, for the records: the token, the session's label when its login gave one, the client's address.
    const label = auth.label(request);
    const actor = () => `${actorName(scope, label)}@${client()}`;
    return api(request, url, control, client, actor, scope);
  };

  /** The JSON API; the caller is authorized. */
  const api = async (
    request: Request,
    url: URL,
    control: RequestControl,
    client: () => string,
    actor: () => string,
    scope: Scope,
  ): Promise<Response> => {
    // What the token sees: its apps only, when it is scoped to apps; no directory of the server, unless it is admin.
    const seen: AdminOptions = {
      ...options,
      ...(scope.apps
        ? { apps: () => options.apps().filter((app) => sees(scope, appName(app))), visible: (app) => sees(scope, app) }
        : {}),
      hidesPaths: scope.role !== "admin",
    };
    const parts = url.pathname
      .split("/")
      .slice(2)
      .map((part) => {
        try {
          return decodeURIComponent(part);
        } catch {
          return "\0"; // names no app and no deploy
        }
      });
    const method = request.method;
    const [resource, name, action, extra] = parts;
    if (resource === "whoami" && name === undefined && method === "GET") return whoami(scope);
    if (resource === "apps" && name === undefined && method === "GET") return listApps(seen);
    if (resource === "deploys" && name === undefined && method === "GET")
      return listDeployments(seen, url.searchParams);
    if (resource === "apps" && name && action === "stats" && extra === undefined && method === "GET")
      return appStatsAnswer(seen, name);
    if (resource === "deploys" && name && action === undefined && method === "GET") return deployRecord(seen, name);
    if (resource === "deploys" && name && action === "log" && extra === undefined && method === "GET") {
      const follow = ["1", "true", "yes"].includes(url.searchParams.get("follow") ?? "");
      if (follow) control.noTimeout(request);
      return follows.log(seen, name, follow, clientKey(client()));
    }
    if (resource === "apps" && name && action && extra === undefined && method === "POST") {
      const app = options.apps().find((a) => appName(a) === name);
      if (!app) return apiError(404, "not found", `no app named ${JSON.stringify(name.slice(0, 100))}`);
      const refused = ["deploy", "rollback", "pause", "resume"].includes(action)
        ? refusal(scope, action as Action, appName(app))
        : undefined;
      if (refused) return forbidden(options, scope, refused);
      switch (action) {
        case "deploy":
          return deployAction(options, app, request, actor(), scope);
        case "rollback":
          return rollbackAction(options, app, request, actor(), scope);
        case "pause":
          return pauseAction(options, app, request, actor());
        case "resume":
          return resumeAction(options, app, actor());
      }
    }
    if (resource === "deploys" && name && action === "cancel" && extra === undefined && method === "POST")
      return cancelAction(seen, name, actor(), scope);
    return jsonResponse(404, NOT_FOUND);
  };

  const listener: Listener = await runtime.serve({
    port: options.port,
    hostname: options.hostname,
    bounded: options.bounded,
    idleTimeoutSeconds: IDLE_TIMEOUT_SECONDS,
    maxRequestBodySize: MAX_ADMIN_BODY_BYTES,
    fetch: handle,
    error(error) {
      options.logger.error(`admin request failed: ${error.message}`);
      return jsonResponse(500, {
        error: "internal error",
        message: "the request failed inside the service; see its log",
      });
    },
  });
  return {
    port: listener.port,
    async stop() {
      follows.closeAll();
      await listener.stop();
    },
  };
}

/** The login form again after a refused credential: 401, or 429 with `Retry-After` once the client is over budget. */
function loginAgain(root: string, refused: Response, problem: string): Response {
  const retry = refused.headers.get("retry-after");
  if (refused.status !== 429) return loginPage(root, refused.status, problem);
  const form = loginPage(root, 429, `Too many wrong tokens: try again in ${retry ?? "a few"} seconds.`);
  if (retry) form.headers.set("retry-after", retry);
  return form;
}
