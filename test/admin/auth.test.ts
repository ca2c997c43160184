import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { AdminAuth, crossSite, MAX_SESSIONS } from "../../src/admin/auth.ts";
import { isLoopback } from "../../src/system/address.ts";
import { FAILURE_BURST } from "../../src/http/throttle.ts";
import {
  ADMIN_TOKEN,
  adminSession,
  adminUrl,
  bearer,
  crossSiteHeaders,
  startAdmin,
} from "../_support/admin-helpers.ts";
import { makeRepo, post, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";

describe("admin listener: turning it on and off", () => {
  test("with the listener off the service behaves exactly as before: no admin line, no token file", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo ran" });
    expect(server.stdout.text).not.toContain("admin");
    expect(existsSync(join(repo.clone, ".service", "admin.token"))).toBe(false);
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(404);
    await res.text();
  });

  test("with the listener on, .service/ is made 0700 and admin.token 0600 under umask 022", async () => {
    const repo = makeRepo();
    await using _server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_ADMIN_PORT: "0" }, [], {
      umask: "022",
    });
    expect(statSync(join(repo.clone, ".service")).mode & 0o777).toBe(0o700);
    expect(statSync(join(repo.clone, ".service", "admin.token")).mode & 0o777).toBe(0o600);
  });

  test("the admin token is generated into .service/admin.token (0600) on the first start, its file named that once, reused", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: SECRET, SERVICE_ADMIN_PORT: "0" };
    const file = join(repo.clone, ".service", "admin.token");
    let token: string;
    {
      await using first = await startServer(repo.clone, env);
      token = readFileSync(file, "utf8").trim();
      expect(token.length).toBeGreaterThanOrEqual(43);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      // Off a terminal the token is not printed: where it is stored is (test/commands/admin-token-output.test.ts).
      expect(first.stdout.text).toContain(file);
      const res = await fetch(`${adminUrl(first)}/api/apps`, { headers: bearer(token) });
      expect(res.status).toBe(200);
      await res.text();
    }
    await using second = await startServer(repo.clone, env);
    expect(second.stdout.text).not.toContain(token);
    expect(readFileSync(file, "utf8").trim()).toBe(token);
    const res = await fetch(`${adminUrl(second)}/api/apps`, { headers: bearer(token) });
    expect(res.status).toBe(200);
    await res.text();
  });
});

describe("admin listener: security", () => {
  test("no token → 401 on the API; a wrong token is slowed like a wrong webhook secret (the throttle)", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone);
    const { admin } = server;
    for (const path of ["/api/apps", "/api/deploys", "/api/deploys/last"]) {
      const res = await fetch(`${admin}${path}`);
      expect(res.status).toBe(401);
      expect((await res.json()).error).toBe("unauthorized");
    }
    const none = await post(`${admin}/api/apps/default/deploy`);
    expect(none.status).toBe(401);
    await none.text();
    // The budget refills one a second: on a slow machine a 401 may come after the burst, before the 429.
    const statuses: number[] = [];
    for (let i = 0; i < FAILURE_BURST * 3 && statuses.at(-1) !== 429; i++) {
      const res = await fetch(`${admin}/api/apps`, { headers: bearer("wrong-token-0123456789") });
      statuses.push(res.status);
      await res.text();
    }
    expect(statuses.slice(0, FAILURE_BURST).every((s) => s === 401)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    // The right token is not checked either until the backoff ends (throttle-every-route.test.ts), then it is.
    await waitFor(async () => {
      const res = await fetch(`${admin}/api/apps`, { headers: bearer() });
      await res.text();
      return res.status === 200;
    }, "the right token accepted after the backoff");
  });

  test("the webhook port answers 404 on /healthz, /metrics, /api/…, /login", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone);
    for (const path of ["/healthz", "/metrics", "/api/apps", "/api/deploys"]) {
      const res = await fetch(`${server.url}${path}`, { headers: bearer() });
      expect(res.status).toBe(404);
      await res.text();
    }
    const login = await fetch(`${server.url}/login`, {
      method: "POST",
      body: new URLSearchParams({ token: ADMIN_TOKEN }),
    });
    expect(login.status).toBe(404);
    await login.text();
  });

  test("login sets a session cookie (HttpOnly, SameSite=Strict, Path=/, Secure behind HTTPS) the API accepts; logout ends it", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone, { SERVICE_TRUST_PROXY: "1" });
    const { admin } = server;
    const wrong = await fetch(`${admin}/login`, {
      method: "POST",
      body: new URLSearchParams({ token: "not-the-token-at-all" }),
      redirect: "manual",
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("set-cookie")).toBeNull();
    await wrong.text();
    const login = await fetch(`${admin}/login`, {
      method: "POST",
      body: new URLSearchParams({ token: ADMIN_TOKEN }),
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    const cookie = login.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^service_session=[A-Za-z0-9_-]{43};/);
    for (const part of ["HttpOnly", "SameSite=Strict", "Path=/"]) expect(cookie).toContain(part);
    expect(cookie).not.toContain("Secure");
    const session = cookie.split(";")[0]!;
    const apps = await fetch(`${admin}/api/apps`, { headers: { cookie: session } });
    expect(apps.status).toBe(200);
    await apps.text();

    const https = await fetch(`${admin}/login`, {
      method: "POST",
      headers: { "x-forwarded-proto": "https" },
      body: new URLSearchParams({ token: ADMIN_TOKEN }),
      redirect: "manual",
    });
    expect(https.headers.get("set-cookie")).toContain("; Secure");
    await https.text();

    const logout = await fetch(`${admin}/logout`, {
      method: "POST",
      headers: { cookie: session },
      redirect: "manual",
    });
    expect(logout.status).toBe(303);
    expect(logout.headers.get("set-cookie")).toContain("Max-Age=0");
    await logout.text();
    const after = await fetch(`${admin}/api/apps`, { headers: { cookie: session } });
    expect(after.status).toBe(401);
    await after.text();
  });

  test("a cross-site form POST with the session cookie is refused and starts no deploy", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "echo ran" });
    const { admin } = server;
    const session = await adminSession(admin);
    for (const headers of crossSiteHeaders(session)) {
      const res = await fetch(`${admin}/api/apps/default/deploy`, { method: "POST", headers, body: "" });
      expect(res.status).toBe(403);
      expect((await res.json()).error).toBe("cross-site request");
    }
    expect(
      existsSync(join(repo.clone, ".service", "logs")) ? readdirSync(join(repo.clone, ".service", "logs")) : [],
    ).toEqual([]);
    // The same request from the dashboard's own page goes through.
    const host = new URL(admin).host;
    const own = await fetch(`${admin}/api/apps/default/deploy`, {
      method: "POST",
      headers: { cookie: session, origin: `http://${host}`, "sec-fetch-site": "same-origin" },
    });
    expect(own.status).toBe(200);
    expect((await own.json()).accepted).toBe(true);
    await waitFor(
      () => server.proc.exitCode === null && readdirSync(join(repo.clone, ".service", "logs")).length >= 2,
      "the deploy's logs",
    );
  });

  test("the login form's body is bounded: a large one is refused without being read", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone);
    const { admin } = server;
    const res = await fetch(`${admin}/login`, { method: "POST", body: `token=${"x".repeat(64 * 1024)}` });
    expect(res.status).toBe(413);
    await res.text();
    const deploy = await fetch(`${admin}/api/apps/default/deploy`, {
      method: "POST",
      headers: bearer(),
      body: "x".repeat(64 * 1024),
    });
    expect(deploy.status).toBe(413);
    await deploy.text();
  });
});

describe("admin token in other output", () => {
  test("an admin token of 4 to 15 characters is warned about at start and by check (its length, never its value); check still exits 0", async () => {
    const repo = makeRepo();
    const weak = "Adm1n-tok3n";
    {
      await using server = await startAdmin(repo.clone, { SERVICE_ADMIN_TOKEN: weak });
      await waitFor(
        () => server.stderr.text.includes("the admin token is only 11 characters"),
        "the weak admin token warning",
      );
      expect(`${server.stdout.text}${server.stderr.text}`).not.toContain(weak);
    }
    const env = { SERVICE_SECRET: SECRET, SERVICE_ADMIN_PORT: "9999", SERVICE_ADMIN_TOKEN: weak };
    const checked = await runCli(["check"], { cwd: repo.clone, env });
    expect(checked.code).toBe(0);
    expect(checked.stdout).toContain(
      "warning: the admin token is only 11 characters: a short secret can be guessed; use 16 or more",
    );
    expect(`${checked.stdout}${checked.stderr}`).not.toContain(weak);
    const strong = await runCli(["check"], { cwd: repo.clone, env: { ...env, SERVICE_ADMIN_TOKEN: ADMIN_TOKEN } });
    expect(strong.stdout).not.toContain("admin token is only");
  });

  test("service check shows the admin token as hidden, never its value", async () => {
    const repo = makeRepo();
    const { code, stdout, stderr } = await runCli(["check"], {
      cwd: repo.clone,
      env: { SERVICE_SECRET: SECRET, SERVICE_ADMIN_PORT: "9999", SERVICE_ADMIN_TOKEN: ADMIN_TOKEN },
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/adminToken.*hidden/);
    expect(`${stdout}${stderr}`).not.toContain(ADMIN_TOKEN);
  });
});

describe("admin auth rules (pure)", () => {
  test("sessions are bounded in number: past the limit the oldest login ends", () => {
    const auth = new AdminAuth(ADMIN_TOKEN);
    const first = auth.login(false).split(";")[0]!;
    const request = (cookie: string) => new Request("http://localhost/api/apps", { headers: { cookie } });
    expect(auth.authorized(request(first))).toBe(true);
    for (let i = 0; i < MAX_SESSIONS; i++) auth.login(false);
    expect(auth.sessionCount).toBe(MAX_SESSIONS);
    expect(auth.authorized(request(first))).toBe(false);
  });

  test("sessions expire after 12 hours", () => {
    const auth = new AdminAuth(ADMIN_TOKEN);
    const now = Date.now();
    const session = auth.login(false, now).split(";")[0]!;
    const request = new Request("http://localhost/api/apps", { headers: { cookie: session } });
    expect(auth.authorized(request, now + 11 * 3600_000)).toBe(true);
    expect(auth.authorized(request, now + 12 * 3600_000 + 1)).toBe(false);
  });

  test.each([
    [{ "sec-fetch-site": "same-origin" }, false],
    [{ "sec-fetch-site": "none" }, false],
    [{ "sec-fetch-site": "cross-site" }, true],
    [{ origin: "http://admin.local:9000", host: "admin.local:9000" }, false],
    [{ origin: "http://evil.example", host: "admin.local:9000" }, true],
    [{ origin: "null", host: "admin.local:9000" }, true],
    [{}, false],
  ] as [Record<string, string>, boolean][])("crossSite(%p) is %p", (headers, expected) => {
    expect(crossSite(new Request("http://admin.local:9000/login", { method: "POST", headers }), false)).toBe(expected);
  });

  test.each([
    ["127.0.0.1", true],
    ["127.1.2.3", true],
    ["::1", true],
    ["localhost", true],
    ["0.0.0.0", false],
    ["::", false],
    ["10.0.0.1", false],
    ["admin.example.com", false],
  ])("isLoopback(%p) is %p: /metrics needs the token unless loopback", (host, expected) => {
    expect(isLoopback(host)).toBe(expected);
  });
});
