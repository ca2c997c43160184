/**
 * Routing: the app a webhook request is for, by its path and then its host (two map lookups whatever the number
 * of apps), and the host a request was sent to.
 */
/** What routing needs of an app: its path, and its host if it has one. */
export interface Routed {
  path: string;
  host?: string;
}

/** Host without port, lower case: `Example.com:443` → `example.com`, `[::1]:3141` → `[::1]`. */
export function normalizeHost(host: string): string {
  const trimmed = host.trim().toLowerCase();
  if (trimmed.startsWith("[")) return trimmed.slice(0, trimmed.indexOf("]") + 1);
  return trimmed.replace(/:\d*$/, "").replace(/\.$/, "");
}

/** The host a request was sent to: `Host`, or with `trustProxy` the first `X-Forwarded-Host`. */
export function requestHost(request: Request, trustProxy: boolean): string {
  const forwarded = trustProxy ? request.headers.get("x-forwarded-host")?.split(",")[0] : undefined;
  return normalizeHost(forwarded || request.headers.get("host") || urlHost(request.url));
}

/** The host of an absolute URL; "" for a relative or unparsable one (Bun's `request.url` when Host is empty). */
function urlHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "";
  }
}

/** The apps by path, then by host (routes are unique: collectApps refuses a second app on a host + path). */
export type RouteTable<A extends Routed> = Map<string, { any?: A; byHost: Map<string, A> }>;

export function routeTable<A extends Routed>(apps: A[]): RouteTable<A> {
  const table: RouteTable<A> = new Map();
  for (const app of apps) {
    let entry = table.get(app.path);
    if (!entry) table.set(app.path, (entry = { byHost: new Map() }));
    if (app.host === undefined) entry.any ??= app;
    else if (!entry.byHost.has(app.host)) entry.byHost.set(app.host, app);
  }
  return table;
}

/**
 * The app a request is for: its path, and its host for apps that have one; two map lookups whatever the number of
 * apps. `host` is asked only then, so a single app (any host) never parses the Host header.
 */
export function routeRequest<A extends Routed>(
  routes: RouteTable<A>,
  pathname: string,
  host: () => string,
): A | undefined {
  const entry = routes.get(pathname);
  if (!entry) return undefined;
  return entry.any ?? entry.byHost.get(host());
}
