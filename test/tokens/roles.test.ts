/**
 * docs/admin.md "Tokens": each token opens what its role allows, on its apps only: `read` every GET, `deploy`
 * also deploy, rollback and cancel of its apps (never pause, resume, force or skipGate), `admin` everything. A
 * refusal is 403 naming the token's scope, counted per token in /metrics.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN, adminSession, bearer, startAdmin } from "../_support/admin-helpers.ts";
import { hasEnded, waitFor } from "../_support/helpers.ts";
import { TOKEN_VALUES, tokenSetup } from "../_support/token-fixtures.ts";

type Token = keyof typeof TOKEN_VALUES;

/** The deploy ids the routes use: the app's first deploy, made with the admin token. */
interface Ids {
  web: string;
  api: string;
}

interface Route {
  what: string;
  method: "GET" | "POST";
  path: (ids: Ids, app: string) => string;
  body?: unknown;
}

const ROUTES: Route[] = [
  { what: "GET /api/whoami", method: "GET", path: () => "/api/whoami" },
  { what: "GET /api/apps", method: "GET", path: () => "/api/apps" },
  { what: "GET /api/deploys", method: "GET", path: (_, app) => `/api/deploys?app=${app}` },
  { what: "GET /api/deploys/<id>", method: "GET", path: (ids, app) => `/api/deploys/${ids[app as keyof Ids]}` },
  { what: "GET its log", method: "GET", path: (ids, app) => `/api/deploys/${ids[app as keyof Ids]}/log` },
  { what: "GET /metrics", method: "GET", path: () => "/metrics" },
  { what: "GET /api/apps/<app>/stats", method: "GET", path: (_, app) => `/api/apps/${app}/stats` },
  { what: "GET the app page", method: "GET", path: (_, app) => `/apps/${app}` },
  { what: "POST deploy", method: "POST", path: (_, app) => `/api/apps/${app}/deploy` },
  { what: "POST deploy with a ref", method: "POST", path: (_, app) => `/api/apps/${app}/deploy`, body: "ref" },
  {
    what: "POST deploy with force",
    method: "POST",
    path: (_, app) => `/api/apps/${app}/deploy`,
    body: { force: true },
  },
  {
    what: "POST deploy with skipGate",
    method: "POST",
    path: (_, app) => `/api/apps/${app}/deploy`,
    body: { skipGate: true },
  },
  { what: "POST rollback", method: "POST", path: (_, app) => `/api/apps/${app}/rollback`, body: "to" },
  { what: "POST cancel", method: "POST", path: (ids, app) => `/api/deploys/${ids[app as keyof Ids]}/cancel` },
  { what: "POST pause", method: "POST", path: (_, app) => `/api/apps/${app}/pause`, body: { reason: "test" } },
  { what: "POST resume", method: "POST", path: (_, app) => `/api/apps/${app}/resume` },
];

/**
 * The status each token gets on each route, on an app: 200 an answer (an accepted deploy too), 409 a cancel of a deploy that
 * ended (allowed, too late), 403 refused by the scope, 404 a deploy of an app the token does not see.
 */
// biome-ignore format: a table, a column per route
const EXPECTED: { token: Token; app: string; statuses: number[] }[] = [
  //                                  whoami apps list  rec  log  metr stat page dep  ref  forc skip roll canc paus resu
  { token: "grafana", app: "web", statuses: [200, 200, 200, 200, 200, 200, 200, 200, 403, 403, 403, 403, 403, 403, 403, 403] },
  { token: "ci-web", app: "web", statuses: [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 403, 403, 200, 409, 403, 403] },
  { token: "ci-web", app: "api", statuses: [200, 200, 200, 404, 404, 200, 404, 404, 403, 403, 403, 403, 403, 404, 403, 403] },
  { token: "ops", app: "web", statuses: [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 409, 200, 200] },
];

describe("tokens scoped to a role and apps (docs/admin.md Tokens)", () => {
  test("each role on each route of the admin API, on its app and on another: the status its scope gives", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const { admin } = server;
    const deployWith = async (app: string) => {
      const res = await fetch(`${admin}/api/apps/${app}/deploy`, { method: "POST", headers: bearer() });
      const { id } = (await res.json()) as { id: string };
      return id;
    };
    const ended = (id: string) =>
      waitFor(async () => {
        const res = await fetch(`${admin}/api/deploys/${id}`, { headers: bearer() });
        const record = res.ok ? ((await res.json()) as { status: string }) : undefined;
        return record && hasEnded(record.status);
      }, `deploy ${id} to end`);
    const ids: Ids = { web: await deployWith("web"), api: await deployWith("api") };
    await ended(ids.web);
    await ended(ids.api);

    const got: { token: Token; app: string; statuses: number[] }[] = [];
    const messages: string[] = [];
    for (const { token, app } of EXPECTED) {
      const statuses: number[] = [];
      for (const route of ROUTES) {
        const body =
          route.body === "ref"
            ? { ref: ids[app as keyof Ids] }
            : route.body === "to"
              ? { to: ids[app as keyof Ids] }
              : route.body;
        const res = await fetch(`${admin}${route.path(ids, app)}`, {
          method: route.method,
          // A proxied /metrics asks for a token even on loopback.
          headers: {
            ...bearer(TOKEN_VALUES[token]),
            "x-forwarded-for": "10.0.0.9",
            "content-type": "application/json",
          },
          ...(route.method === "POST" ? { body: JSON.stringify(body ?? {}) } : {}),
        });
        statuses.push(res.status);
        const text = await res.text();
        if (res.status === 403) messages.push(`${route.what}: ${JSON.parse(text).message}`);
      }
      got.push({ token, app, statuses });
    }
    expect(got).toEqual(EXPECTED);
    expect(messages).toContain("POST pause: token ci-web (deploy: web) may not pause");
    expect(messages).toContain('POST deploy with force: token ci-web (deploy: web) may not deploy with "force": true');
    expect(messages).toContain('POST deploy: token ci-web (deploy: web) may not deploy app "api"');
    expect(messages).toContain("POST deploy: token grafana (read) may not deploy");

    // Refusals are counted per token; the admin token's (none here) and the values never show.
    const metrics = await (await fetch(`${admin}/metrics`)).text();
    expect(metrics).toContain('service_token_refusals_total{token="grafana"} 8');
    expect(metrics).toContain('service_token_refusals_total{token="ci-web"} 11');
    expect(metrics).not.toContain('token="ops"');
  }, 120_000);

  test("GET /api/whoami names the token, its role and apps; the admin token is admin", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const who = async (token: string) => (await fetch(`${server.admin}/api/whoami`, { headers: bearer(token) })).json();
    expect(await who(TOKEN_VALUES["ci-web"])).toEqual({ name: "ci-web", role: "deploy", apps: ["web"] });
    expect(await who(TOKEN_VALUES.grafana)).toEqual({ name: "grafana", role: "read", apps: null });
    expect(await who(ADMIN_TOKEN)).toEqual({ name: "admin", role: "admin", apps: null });
  });

  test("a token scoped to web lists web only: apps and the history of api are filtered out", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    for (const app of ["web", "api"]) {
      const res = await fetch(`${server.admin}/api/apps/${app}/deploy`, { method: "POST", headers: bearer() });
      await res.text();
    }
    await waitFor(async () => {
      const all = (await (await fetch(`${server.admin}/api/deploys`, { headers: bearer() })).json()) as unknown[];
      return all.length === 2;
    }, "both deploys in the history");
    const ci = bearer(TOKEN_VALUES["ci-web"]);
    const apps = (await (await fetch(`${server.admin}/api/apps`, { headers: ci })).json()) as {
      apps: { name: string }[];
    };
    expect(apps.apps.map((app) => app.name)).toEqual(["web"]);
    const history = (await (await fetch(`${server.admin}/api/deploys`, { headers: ci })).json()) as { app: string }[];
    expect(history.map((entry) => entry.app)).toEqual(["web"]);
  });

  test("a deploy of an app the token does not see never makes an id prefix ambiguous: the prefix names the one it sees", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const ids: Record<string, string> = {};
    for (const app of ["web", "api"]) {
      const res = await fetch(`${server.admin}/api/apps/${app}/deploy`, { method: "POST", headers: bearer() });
      ids[app] = ((await res.json()) as { id: string }).id;
    }
    await waitFor(async () => {
      const all = (await (await fetch(`${server.admin}/api/deploys`, { headers: bearer() })).json()) as any[];
      return all.length === 2 && all.every((entry) => entry.status !== "running");
    }, "both deploys in the history");
    // A record of api whose id starts as web's does: the history as the service writes it, under another id.
    const logs = join(setup.cwd, ".service", "logs");
    const twin = `${ids.web!.slice(0, 8)}${ids.api!.slice(8)}`;
    for (const name of readdirSync(logs).filter((file) => file.includes(ids.api!)))
      writeFileSync(
        join(logs, name.replace(ids.api!, twin)),
        readFileSync(join(logs, name), "utf8").replaceAll(ids.api!, twin),
      );
    const prefix = ids.web!.slice(0, 8);
    expect((await fetch(`${server.admin}/api/deploys/${prefix}`, { headers: bearer() })).status).toBe(409);
    const seen = await fetch(`${server.admin}/api/deploys/${prefix}`, { headers: bearer(TOKEN_VALUES["ci-web"]) });
    expect(seen.status).toBe(200);
    expect(((await seen.json()) as { id: string }).id).toBe(ids.web!);
    const hidden = await fetch(`${server.admin}/api/deploys/${twin.slice(0, 12)}`, {
      headers: bearer(TOKEN_VALUES["ci-web"]),
    });
    expect(hidden.status).toBe(404);
  });

  test("the dashboard with a read token: its pages open, and every action posted from it is refused (403)", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const session = await adminSession(server.admin, TOKEN_VALUES.grafana);
    for (const page of ["/", "/deploys"]) {
      const res = await fetch(`${server.admin}${page}`, { headers: { cookie: session } });
      expect({ page, status: res.status, login: (await res.text()).includes('name="token"') }).toEqual({
        page,
        status: 200,
        login: false,
      });
    }
    const whoami = await (await fetch(`${server.admin}/api/whoami`, { headers: { cookie: session } })).json();
    expect(whoami).toEqual({ name: "grafana", role: "read", apps: null });
    for (const action of ["apps/web/deploy", "apps/web/rollback", "apps/web/pause", "apps/web/resume"]) {
      const res = await fetch(`${server.admin}/api/${action}`, {
        method: "POST",
        headers: { cookie: session, "sec-fetch-site": "same-origin", "content-type": "application/json" },
        body: "{}",
      });
      expect({ action, status: res.status, error: ((await res.json()) as { error: string }).error }).toEqual({
        action,
        status: 403,
        error: "forbidden",
      });
    }
  });
});
