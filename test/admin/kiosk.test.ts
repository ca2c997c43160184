/**
 * docs/admin.md "The wall": a `read` token opens a kiosk session at `/wall?kiosk=1` (its Bearer header on that
 * URL, or the form that URL shows); the session opens only the wall and its live feed, lasts `adminKioskDays`, and
 * ends at the next request after its token's file changes or the token is removed. Deploy and admin tokens open none.
 */
import { describe, expect, test } from "bun:test";
import { utimesSync } from "node:fs";
import { ADMIN_TOKEN, adminSession, startAdmin } from "../_support/admin-helpers.ts";
import { waitFor } from "../_support/repo.ts";
import { TOKEN_VALUES, standardTokens, tokenSetup } from "../_support/token-fixtures.ts";
import { readAudit } from "../../src/audit/read.ts";
import { auditDir } from "../../src/audit/trail.ts";

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** The session cookie of a response (`service_session=…`), and its Max-Age. */
function sessionOf(res: Response): { cookie: string; maxAge: number } {
  const set = res.headers.get("set-cookie") ?? "";
  expect(set).toStartWith("service_session=");
  return { cookie: set.split(";")[0]!, maxAge: Number(/Max-Age=(\d+)/.exec(set)?.[1]) };
}

describe("the wall's kiosk session", () => {
  test("a read token's Bearer header on /wall?kiosk=1 opens one: the wall and GET /api/apps only, for adminKioskDays", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const { admin } = server;
    const opened = await fetch(`${admin}/wall?kiosk=1`, { headers: bearer(TOKEN_VALUES.grafana) });
    expect(opened.status).toBe(200);
    const page = await opened.text();
    expect(page).toContain('data-page="wall"');
    expect(page).toContain("data-kiosk");
    expect(page).not.toContain('href="deploys"');
    const { cookie, maxAge } = sessionOf(opened);
    expect(maxAge).toBe(30 * 86_400);
    expect(readAudit(auditDir(setup.cwd)).at(-1)).toMatchObject({
      action: "login ok",
      actor: "token:grafana",
      method: "kiosk",
      outcome: "ok",
    });

    const as = { cookie };
    const wall = await fetch(`${admin}/wall`, { headers: as });
    expect(wall.status).toBe(200);
    expect(await wall.text()).toContain("data-kiosk");
    const apps = await fetch(`${admin}/api/apps`, { headers: as });
    expect(apps.status).toBe(200);
    expect(((await apps.json()) as { apps: { name: string }[] }).apps.map((app) => app.name)).toEqual(["web", "api"]);
    for (const path of [
      "/",
      "/deploys",
      "/apps/web",
      "/api/deploys",
      "/api/whoami",
      "/api/apps/web/stats",
      "/metrics",
    ]) {
      const res = await fetch(`${admin}${path}`, { headers: as });
      expect([path, res.status]).toEqual([path, 403]);
      expect(await res.json()).toMatchObject({ error: "forbidden", message: expect.stringContaining("kiosk") });
    }
    const deploy = await fetch(`${admin}/api/apps/web/deploy`, { method: "POST", headers: as, body: "{}" });
    expect(deploy.status).toBe(403);
    await deploy.text();
    // The same token as a Bearer header reads what a read token reads: the kiosk is the session's limit.
    expect((await fetch(`${admin}/api/deploys`, { headers: bearer(TOKEN_VALUES.grafana) })).status).toBe(200);
  });

  test("without kiosk=1, /wall is a dashboard page: the login form, then the wall with the dashboard's links", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const form = await fetch(`${server.admin}/wall`);
    expect(form.status).toBe(401);
    expect(await form.text()).toContain("Admin token");
    const cookie = await adminSession(server.admin, TOKEN_VALUES["ci-web"]);
    const wall = await fetch(`${server.admin}/wall`, { headers: { cookie } });
    expect(wall.status).toBe(200);
    const page = await wall.text();
    expect(page).toContain('data-page="wall"');
    expect(page).toContain('href="deploys"');
    expect(page).not.toContain("data-kiosk");
    // A deploy token's session is no kiosk: it opens the rest too.
    expect((await fetch(`${server.admin}/api/deploys`, { headers: { cookie } })).status).toBe(200);
  });

  test("deploy and admin tokens open none, by Bearer header or by the form; a wrong token is refused and counted", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const { admin } = server;
    for (const [token, actor] of [
      [TOKEN_VALUES["ci-web"], "token:ci-web"],
      [TOKEN_VALUES.ops, "token:ops"],
      [ADMIN_TOKEN, "admin"],
    ] as const) {
      const res = await fetch(`${admin}/wall?kiosk=1`, { headers: bearer(token) });
      expect(res.status).toBe(403);
      expect(res.headers.get("set-cookie")).toBeNull();
      expect(await res.json()).toMatchObject({ error: "forbidden", message: expect.stringContaining("read token") });
      expect(readAudit(auditDir(setup.cwd)).at(-1)).toMatchObject({
        action: "login refused",
        actor,
        method: "kiosk",
        outcome: "refused",
      });
      const form = await fetch(`${admin}/login?kiosk=1`, {
        method: "POST",
        body: new URLSearchParams({ token }),
        headers: { accept: "text/html" },
        redirect: "manual",
      });
      expect(form.status).toBe(403);
      expect(form.headers.get("set-cookie")).toBeNull();
      expect(await form.text()).toContain("read token only");
    }
    const wrong = await fetch(`${admin}/wall?kiosk=1`, { headers: bearer("wrong-token-0123456789abcdef") });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('action="./login?kiosk=1"');
  });

  test("the form /wall?kiosk=1 shows opens one with a read token; it lasts adminKioskDays", async () => {
    const setup = tokenSetup();
    setup.config(standardTokens(setup.file), ["adminKioskDays: 2"]);
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const { admin } = server;
    const form = await fetch(`${admin}/wall?kiosk=1`);
    expect(form.status).toBe(401);
    const html = await form.text();
    expect(html).toContain('action="./login?kiosk=1"');
    expect(html).toContain("Read token");
    const login = await fetch(`${admin}/login?kiosk=1`, {
      method: "POST",
      body: new URLSearchParams({ token: TOKEN_VALUES.grafana }),
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    expect(login.headers.get("location")).toBe("wall?kiosk=1");
    const { cookie, maxAge } = sessionOf(login);
    expect(maxAge).toBe(2 * 86_400);
    expect((await fetch(`${admin}/api/apps`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${admin}/api/deploys`, { headers: { cookie } })).status).toBe(403);
  });

  test("it ends at the next request after its token's file changes (the same value written again), or once the token is removed from the config", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const { admin } = server;
    const open = async () =>
      sessionOf(await fetch(`${admin}/wall?kiosk=1`, { headers: bearer(TOKEN_VALUES.grafana) })).cookie;
    const apps = async (cookie: string) => (await fetch(`${admin}/api/apps`, { headers: { cookie } })).status;

    const first = await open();
    expect(await apps(first)).toBe(200);
    // Touched: the value is the same, the file is not.
    const later = new Date(Date.now() + 5000);
    utimesSync(setup.file("grafana"), later, later);
    expect(await apps(first)).toBe(401);
    const page = await fetch(`${admin}/wall?kiosk=1`, { headers: { cookie: first } });
    expect(page.status).toBe(401);
    expect(await page.text()).toContain("Read token");

    const second = await open();
    expect(await apps(second)).toBe(200);
    setup.config(standardTokens(setup.file).filter((line) => !line.includes("grafana")));
    // The token is removed at the server's next look at its config (docs/admin.md "Tokens"): from then on, refused.
    await waitFor(
      async () => (await apps(second)) === 401,
      "the session refused once the config no longer has its token",
    );
    expect(await apps(second)).toBe(401);
  });
});
