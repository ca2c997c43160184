import type { Logger } from "../system/logger.ts";
import { requestUrl } from "../http/request-url.ts";
import { jsonResponse } from "../http/json.ts";
import { runtime } from "#runtime";
import type { Listener, RequestControl } from "../runtime/types.ts";
import { clientAddress, clientKey, FailureThrottle } from "../http/throttle.ts";
import {
  apiError,
  forbidden,
  appName,
  deployRecord,
  listApps,
  listDeployments,
  whoami,
  type AdminContext,
} from "./api.ts";
import { appStatsAnswer } from "./app-api.ts";
import { Follows } from "./follows.ts";
import { type Acting, APP_ACTIONS, type AppAction, appAction, cancelAudited, seenBy } from "./act.ts";
import { auditAnswer, mayAudit } from "./audit-api.ts";
import { DoraGauges } from "./metrics-dora.ts";
import { metricsAnswer } from "./metrics-answer.ts";
import { KIOSK_ONLY, kioskAllows, kioskWall } from "./kiosk.ts";
import { wallPage } from "./wall.ts";
import { dashboardAsset, dashboardPage, dashboardRoute, loginPage } from "./pages.ts";
import { choicesOf, endSessions, forgedHeader, loginAgain, type SignIns, signInRoute } from "./login.ts";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import type { TrustedHeader } from "../people/trusted-header.ts";
import { noRole, scopeOf as roleScope } from "../people/roles.ts";
import { isLoopback } from "../system/address.ts";
import { AdminAuth, crossSite } from "./auth.ts";
import type { TokensInForce } from "../tokens/follow.ts";
import { actorName, scopeText, sees, type Scope } from "../tokens/scope.ts";

const isAppAction = (action: string | undefined): action is AppAction => APP_ACTIONS.includes(action as AppAction);

/** Largest body of a POST to the admin listener (`/login` carries one short field, an API action a small JSON object). */
export const MAX_ADMIN_BODY_BYTES = 4096;

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
const NOT_POST = Object.freeze({
  error: "method not allowed",
  message: "the MCP endpoint is stateless: send each message as a POST",
});

export interface AdminOptions extends AdminContext {
  port: number;
  hostname: string;
  /** Count the connections and close the ones past the bounds (`boundedPort`). */
  bounded: boolean;
  /** The admin token; a function when it may change while the listener runs (a rotated token file). */
  token: string | (() => string);
  /** The tokens scoped to a role and apps (`tokens`), their values following their files. */
  tokens?: TokensInForce;
  logger: Logger;
  /** `POST /mcp` (`adminMcp`, docs/agents.md): the agents' endpoint, loaded only when configured; unset: 404. */
  mcp?: (request: Request, acting: Acting, client: string) => Promise<Response>;
  /** The people's keys in force (their roles apply at each request), and how long a session lasts. */
  people?: () => People;
  sessionHours?: number;
  /** How long a kiosk session of the wall lasts (`adminKioskDays`). */
  kioskDays?: number;
  /** With `adminOidc`: the provider's sign-in. */
  oidc?: SignIns["oidc"];
  /** With `adminTrustedHeader`: the user its proxy names. */
  trusted?: TrustedHeader;
}

type People = Pick<ResolvedConfig, "adminOidc" | "adminTrustedHeader" | "adminTokenLogin">;

export interface AdminListener {
  port: number;
  /** Ends the follow streams, then closes. */
  stop(): Promise<void>;
}

/** The second, optional listener: `/healthz`, `/metrics`, `/api/`, `/login`, `/logout` and the dashboard. */
export async function startAdminListener(options: AdminOptions): Promise<AdminListener> {
  const people: () => People = options.people ?? (() => ({ adminTokenLogin: true }));
  /** A person's role from the roles in force: their provider's, or the proxy's. */
  const personScope = (person: Parameters<typeof roleScope>[0]) => {
    const now = people();
    return roleScope(person, (person.actor.startsWith("oidc:") ? now.adminOidc : now.adminTrustedHeader)?.roles);
  };
  const hours = options.sessionHours;
  const days = options.kioskDays;
  const auth = new AdminAuth(
    options.token,
    options.tokens,
    personScope,
    hours ? hours * 3_600_000 : undefined,
    days ? days * 86_400_000 : undefined,
  );
  const throttle = new FailureThrottle();
  const ins: SignIns = {
    auth,
    throttle,
    logger: options.logger,
    tokenLogin: () => people().adminTokenLogin,
    personScope,
    ...(options.oidc ? { oidc: options.oidc } : {}),
    ...(options.audit ? { audit: options.audit } : {}),
  };
  const follows = new Follows();
  const doraGauges = new DoraGauges(options.cwd);
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

    const asked = { request, path, client, secure, throttled };
    const signIn = await signInRoute(ins, asked);
    if (signIn) return signIn;
    // A kiosk session (the wall's) opens the wall and its live feed, nothing else.
    if (auth.kiosk(request) && !kioskAllows(method, path)) return jsonResponse(403, KIOSK_ONLY);
    // A user a trusted proxy names: believed only from its addresses with its secret, else refused and counted.
    const proxied = options.trusted?.identify(request, control.remoteAddress(request));
    if (proxied === "refused") return forgedHeader(ins, asked);
    const proxiedScope = proxied ? ins.personScope(proxied) : undefined;
    if (proxied && !proxiedScope) return jsonResponse(403, { error: "forbidden", message: noRole(proxied) });
    /** The scope of the request: the proxy's user, the Bearer token, or the session. */
    const scopeOf = () => proxiedScope ?? auth.scope(request);
    const asset = method === "GET" ? dashboardAsset(path) : undefined;
    if (asset) return asset;
    const page = method === "GET" ? dashboardRoute(path) : undefined;
    if (page) {
      const blocked = throttled();
      if (blocked) return loginAgain(page.root, blocked, "", choicesOf(ins));
      if (page.page === "wall" && !proxiedScope) {
        const wall = kioskWall(ins, asked);
        if (wall) return wall;
      }
      const scope = scopeOf();
      if (scope) {
        // An app page names one of the config's apps, and one the token sees; any other is not found.
        const seen = (name: string) => !!scope && sees(scope, name) && options.apps().some((a) => appName(a) === name);
        if (page.app !== undefined && !seen(page.app)) return jsonResponse(404, NOT_FOUND);
        // The Audit page is the admin role's over every app, as GET /api/audit is.
        if (page.page === "audit" && !mayAudit(auth.scope(request))) return jsonResponse(404, NOT_FOUND);
        return page.page === "wall" ? wallPage(false) : dashboardPage(page);
      }
      if (!auth.presented(request)) return loginPage(page.root, 401, "", choicesOf(ins));
      // A wrong Bearer token or a stale session: counted like on the API (else the pages answer guesses
      // unthrottled), and the stale cookie cleared so a browser stops sending it.
      const form = loginAgain(page.root, throttle.refuse(client()), "", choicesOf(ins));
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
        if (!scopeOf()) return refuse();
      }
      // A token scoped to apps is shown its apps' counters only; open metrics (no token) show every app's.
      const scope = auth.presented(request) ? auth.scope(request) : undefined;
      const only = scope?.apps ? { app: (name: string) => sees(scope, name), token: scope.name } : undefined;
      return metricsAnswer(options, doraGauges, only);
    }
    if (path === "/mcp" && options.mcp) {
      // Stateless: no session to resume (GET) or end (DELETE), every call a POST with its token.
      if (method !== "POST") return jsonResponse(405, NOT_POST, { allow: "POST" });
      const blocked = throttled();
      if (blocked) return blocked;
      const scope = auth.scope(request);
      if (!scope) return refuse();
      const actor = `${actorName(scope, auth.label(request))}@${client()}`;
      return options.mcp(request, { scope, actor, via: "mcp" }, clientKey(client()));
    }
    if (!path.startsWith("/api/")) return jsonResponse(404, NOT_FOUND);
    const blocked = throttled();
    if (blocked) return blocked;
    const scope = scopeOf();
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
    const seen: AdminOptions = { ...seenBy(options, scope), hidesPaths: scope.role !== "admin" };
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
    if (resource === "apps" && name && action === "previews" && seen.previews?.()) {
      const { previewsAnswer } = await import("./previews-api.ts");
      const answer = await previewsAnswer(seen, seen.previews(), { scope, actor: actor() }, parts, method);
      if (answer) return answer;
    }
    if (resource === "apps" && name && action === "stats" && extra === undefined && method === "GET")
      return appStatsAnswer(seen, name, url.searchParams);
    if (resource === "deploys" && name && action === undefined && method === "GET") return deployRecord(seen, name);
    if (resource === "deploys" && name && action === "log" && extra === undefined && method === "GET") {
      const follow = ["1", "true", "yes"].includes(url.searchParams.get("follow") ?? "");
      if (follow) control.noTimeout(request);
      return follows.log(seen, name, follow, clientKey(client()));
    }
    const acting = { scope, actor: actor() };
    if (resource === "apps" && name && isAppAction(action) && extra === undefined && method === "POST")
      return appAction(options, acting, name, action, request);
    if (resource === "deploys" && name && action === "cancel" && extra === undefined && method === "POST")
      return cancelAudited(seen, acting, name);
    if (resource === "audit" && name === undefined && method === "GET")
      return auditAnswer(options, scope, url.searchParams);
    if (resource === "sessions" && name && action === "end" && extra === undefined && method === "POST") {
      if (scope.role !== "admin") return forbidden(options, scope, `${scopeText(scope)} may not end sessions`);
      return endSessions(ins, name, actor());
    }
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
