import { isDeployRef } from "../history/read.ts";
import { DASHBOARD_JS } from "./assets.ts";
import { DASHBOARD_CSS } from "./styles.ts";

/**
 * The dashboard: one HTML shell per page, and the one script that fills it from the JSON API (every value goes
 * in as text, never as markup) and keeps it current. Nothing in the shell comes from the request but the page
 * kind, and every URL is relative, so the dashboard works behind a proxy's sub-path.
 */
export type PageKind = "apps" | "app" | "deploys" | "deploy" | "audit" | "wall";

export interface DashboardRoute {
  page: PageKind;
  /** The relative path from the page back to the listener's root: "./" or "../". */
  root: string;
  /** The app page's app (the caller checks that it is one the token sees). */
  app?: string;
}

/** The dashboard page `path` names, if any. */
export function dashboardRoute(path: string): DashboardRoute | undefined {
  if (path === "/") return { page: "apps", root: "./" };
  if (path === "/deploys") return { page: "deploys", root: "./" };
  if (path === "/audit") return { page: "audit", root: "./" };
  if (path === "/wall") return { page: "wall", root: "./" };
  const match = /^\/deploys\/([^/]+)$/.exec(path);
  if (match && isDeployRef(match[1]!)) return { page: "deploy", root: "../" };
  const app = /^\/apps\/([^/]+)$/.exec(path);
  if (app) {
    try {
      return { page: "app", root: "../", app: decodeURIComponent(app[1]!) };
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** No request to another host, no inline script, no framing by another site. */
export const HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "cache-control": "no-store",
  // Not no-referrer: with it the browser sends `Origin: null` on the forms, which the cross-site check refuses.
  "referrer-policy": "same-origin",
  "x-content-type-options": "nosniff",
};

const TITLES: Record<PageKind, string> = {
  apps: "Apps",
  app: "App",
  deploys: "Deploy history",
  deploy: "Deploy",
  audit: "Audit",
  wall: "Wall",
};

/** An app's name in the shell (the config's names are plain, but nothing from the URL goes in as markup). */
const escaped = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function shell(title: string, root: string, body: string, page = ""): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · service</title><link rel="stylesheet" href="${root}assets/dashboard.css"></head>
<body${page ? ` data-page="${page}" data-root="${root}"` : ""}>
${body}
</body></html>
`;
}

export function dashboardPage(route: DashboardRoute): Response {
  const { page, root } = route;
  const title = route.app === undefined ? TITLES[page] : escaped(route.app);
  const link = (kind: PageKind, href: string) =>
    `<a href="${root}${href}"${kind === page || (page === "deploy" && kind === "deploys") || (page === "app" && kind === "apps") ? ' aria-current="page"' : ""}>${TITLES[kind]}</a>`;
  const body = `<header><nav aria-label="Dashboard">${link("apps", "")} ${link("deploys", "deploys")} ${link("wall", "wall")} <span data-act="audit">${link("audit", "audit")}</span></nav>
<form method="post" action="${root}logout"><button type="submit">Log out</button></form></header>
<main><h1>${title}</h1>
<p id="notice" role="status" aria-live="polite"></p><p id="problem" role="alert"></p>
<div id="content"><p>Loading…</p></div></main>
<script src="${root}assets/dashboard.js"></script>`;
  return new Response(shell(title, root, body, page), { headers: HEADERS });
}

/** What the login page offers: the token form (unless `adminTokenLogin: false`), "Sign in with <name>" (`adminOidc`). */
export interface LoginChoices {
  token: boolean;
  oidc?: string;
  /** The wall's kiosk (kiosk.ts): a read token only, posted to `login?kiosk=1`. */
  kiosk?: boolean;
}

/** The login form, shown for every dashboard page until the browser has a session. */
export function loginPage(root: string, status = 401, problem = "", choices: LoginChoices = { token: true }): Response {
  if (choices.kiosk) return kioskLoginPage(root, status, problem);
  const oidc = choices.oidc
    ? `<p><a class="sign-in" href="${root}oidc/login">Sign in with ${escaped(choices.oidc)}</a></p>`
    : "";
  const form = choices.token
    ? `<form method="post" action="${root}login"><label for="token">Admin token</label>
<input id="token" type="password" name="token" autocomplete="current-password" required${choices.oidc ? "" : " autofocus"}>
<label for="label">Your name (optional: the history shows who did what)</label>
<input id="label" type="text" name="label" maxlength="40" autocomplete="username">
<button type="submit">Log in</button></form>`
    : "";
  const hint = choices.token
    ? `<p class="hint">The token is <code>adminToken</code> / <code>SERVICE_ADMIN_TOKEN</code>, the one in <code>.service/admin.token</code>, or one of <code>tokens</code>.</p>`
    : "";
  const body = `<main class="login"><h1>service</h1>
${oidc}${form}
${problem ? `<p role="alert">${escaped(problem)}</p>` : ""}${hint}</main>`;
  return new Response(shell("Log in", root, body), { status, headers: HEADERS });
}

/** The wall's kiosk form: a read token opens a session that shows the wall only. */
function kioskLoginPage(root: string, status: number, problem: string): Response {
  const body = `<main class="login"><h1>service · wall</h1>
<form method="post" action="${root}login?kiosk=1"><label for="token">Read token</label>
<input id="token" type="password" name="token" autocomplete="current-password" required autofocus>
<button type="submit">Open the wall</button></form>
${problem ? `<p role="alert">${escaped(problem)}</p>` : ""}<p class="hint">A kiosk session shows this wall only; it opens with a token of role <code>read</code> (<code>service token add</code>).</p></main>`;
  return new Response(shell("Wall", root, body), { status, headers: HEADERS });
}

/** The page that takes a browser back from the provider to the dashboard: a navigation of our own, so the session cookie (`SameSite=Strict`) goes with it. */
export function signedInPage(root: string, headers: Headers): Response {
  const body = `<meta http-equiv="refresh" content="0;url=${root}"><main class="login"><p><a href="${root}">Continue to the dashboard</a></p></main>`;
  for (const [name, value] of Object.entries(HEADERS)) headers.set(name, value);
  return new Response(shell("Signed in", root, body), { status: 200, headers });
}

/** `GET /assets/dashboard.js` and `/assets/dashboard.css` (and no favicon): embedded, so the binary serves them itself. */
export function dashboardAsset(path: string): Response | undefined {
  const headers = { "cache-control": "no-cache", "x-content-type-options": "nosniff" };
  if (path === "/assets/dashboard.js")
    return new Response(DASHBOARD_JS, { headers: { ...headers, "content-type": "text/javascript; charset=utf-8" } });
  if (path === "/favicon.ico") return new Response(null, { status: 204, headers });
  if (path === "/assets/dashboard.css")
    return new Response(DASHBOARD_CSS, { headers: { ...headers, "content-type": "text/css; charset=utf-8" } });
  return undefined;
}
