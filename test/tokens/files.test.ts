/**
 * docs/admin.md "Tokens": a token lives in its file, read again when the file changes (rotated or revoked without a
 * restart, its dashboard sessions ended with it); a configuration that cannot be used is refused at start and by
 * `service check`, one clear line each; what a token does is recorded as `token:<name>@<address>`.
 */
import { describe, expect, test } from "bun:test";
import { unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN, adminSession, bearer, startAdmin } from "../_support/admin-helpers.ts";
import { hasEnded, makeRepo, runCli, waitFor } from "../_support/helpers.ts";
import { APP_SECRETS, standardTokens, TOKEN_VALUES, tokenSetup, writeToken } from "../_support/token-fixtures.ts";

const ENV = {
  SERVICE_SECRET: undefined,
  SERVICE_PORT: "0",
  SERVICE_ADMIN_PORT: "0",
  SERVICE_ADMIN_TOKEN: "admin-token-0123456789abcdef",
};

describe("a token's file: rotated or revoked without a restart", () => {
  test("editing the file: the old value is 401 at the next request and the sessions it opened end; the new one works; removing the file revokes it", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const old = TOKEN_VALUES["ci-web"];
    const session = await adminSession(server.admin, old);
    const status = async (headers: Record<string, string>) => {
      const res = await fetch(`${server.admin}/api/whoami`, { headers });
      await res.text();
      return res.status;
    };
    expect(await status(bearer(old))).toBe(200);
    expect(await status({ cookie: session })).toBe(200);

    const rotated = "ci-web-rotated-0123456789abcdef";
    writeToken(setup.file("ci-web"), rotated);
    expect(await status(bearer(old))).toBe(401);
    expect(await status({ cookie: session })).toBe(401);
    const page = await fetch(`${server.admin}/`, { headers: { cookie: session } });
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('name="token"');
    expect(await status(bearer(rotated))).toBe(200);

    unlinkSync(setup.file("ci-web"));
    expect(await status(bearer(rotated))).toBe(401);
    // The other tokens are not touched.
    expect(await status(bearer(TOKEN_VALUES.grafana))).toBe(200);
  });
});

describe("a rotated value is checked as the start checks it", () => {
  test("a new value that is another token's or the admin token revokes the token until it has its own, and the service says why", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const status = async (token: string) => {
      const res = await fetch(`${server.admin}/api/whoami`, { headers: bearer(token) });
      const body = (await res.json()) as { name?: string };
      return `${res.status} ${body.name ?? ""}`.trim();
    };
    expect(await status(TOKEN_VALUES["ci-web"])).toBe("200 ci-web");
    // ci-web's file now holds grafana's value: that value stays grafana's, ci-web has none.
    writeToken(setup.file("ci-web"), TOKEN_VALUES.grafana);
    expect(await status(TOKEN_VALUES.grafana)).toBe("200 grafana");
    expect(await status(TOKEN_VALUES["ci-web"])).toBe("401");
    await waitFor(
      () =>
        server.stderr.text.includes(
          `token "ci-web": its new value is token "grafana"'s; revoked until it has a value of its own`,
        ),
      "the warning",
    );
    writeToken(setup.file("ci-web"), ADMIN_TOKEN);
    expect(await status(ADMIN_TOKEN)).toBe("200 admin");
    await waitFor(
      () =>
        server.stderr.text.includes(
          `token "ci-web": its new value is the admin token; revoked until it has a value of its own`,
        ),
      "the warning",
    );
    const own = "ci-web-own-value-0123456789abcdef";
    writeToken(setup.file("ci-web"), own);
    expect(await status(own)).toBe("200 ci-web");
    for (const value of [...Object.values(TOKEN_VALUES), ADMIN_TOKEN, own])
      expect(server.stdout.text + server.stderr.text).not.toContain(value);
  });
});

describe("service deploy in a shell", () => {
  test("keeps the values of the scoped tokens out of its output, as the server's deploys do", async () => {
    const setup = tokenSetup();
    const repo = makeRepo();
    writeFileSync(
      join(setup.cwd, "service.yaml"),
      [
        `repoPath: ${repo.clone}`,
        `runScript: "cat ${setup.file("ci-web")}"`,
        "tokens:",
        `  - { name: ci, role: deploy, file: ${setup.file("ci-web")} }`,
        "",
      ].join("\n"),
    );
    const deployed = await runCli(["deploy"], { cwd: setup.cwd, env: { SERVICE_SECRET: undefined } });
    expect(deployed.code).toBe(0);
    expect(deployed.stdout).toContain("***");
    expect(deployed.stdout + deployed.stderr).not.toContain(TOKEN_VALUES["ci-web"]);
  });
});

describe("a tokens configuration that cannot be used is refused at start and by service check", () => {
  const cases: { what: string; edit: (setup: ReturnType<typeof tokenSetup>) => void; line: string | RegExp }[] = [
    {
      what: "two tokens with one name",
      edit: (s) => s.config([...standardTokens(s.file), `  - { name: ops, role: read, file: ${s.file("grafana")} }`]),
      line: 'token "ops": two tokens are named "ops"',
    },
    {
      what: "two tokens with one value",
      edit: (s) => writeToken(s.file("ops"), TOKEN_VALUES.grafana),
      line: `token "ops": its value is token "grafana"'s; each token needs its own`,
    },
    {
      what: "a value equal to an app's webhook secret",
      edit: (s) => writeToken(s.file("grafana"), APP_SECRETS.api),
      line: 'token "grafana": its value is the webhook secret of app "api"; give it a value of its own',
    },
    {
      what: "a value equal to the admin token",
      edit: (s) => writeToken(s.file("grafana"), ENV.SERVICE_ADMIN_TOKEN),
      line: 'token "grafana": its value is the admin token; give it a value of its own',
    },
    {
      what: "an unknown app",
      edit: (s) => s.config([`  - { name: ci, role: deploy, apps: [wbe], file: ${s.file("ci-web")} }`]),
      line: 'token "ci": unknown app "wbe" in apps (the apps: web, api)',
    },
    {
      what: "an unknown role",
      edit: (s) => s.config([`  - { name: ci, role: write, file: ${s.file("ci-web")} }`]),
      line: 'token "ci": unknown role "write" (one of read, deploy, admin)',
    },
    {
      what: "a missing file",
      edit: (s) => unlinkSync(s.file("ops")),
      line: /token "ops": \S+\/ops does not exist/,
    },
    {
      what: "a file other users can read",
      edit: (s) => writeToken(s.file("ops"), TOKEN_VALUES.ops, 0o644),
      line: /token "ops": \S+\/ops can be read by other users \(mode 0644\): run chmod 600 \S+\/ops/,
    },
    {
      what: "a value under 16 characters",
      edit: (s) => writeToken(s.file("ops"), "short-token-15c"),
      line: /token "ops": \S+\/ops: its first line has 15 characters; a token needs at least 16/,
    },
  ];
  for (const { what, edit, line } of cases) {
    test(`${what}: the start exits with the line, service check lists it`, async () => {
      const setup = tokenSetup();
      edit(setup);
      const start = await runCli([], { cwd: setup.cwd, env: ENV });
      expect(start.code).not.toBe(0);
      expect(`${start.stdout}${start.stderr}`).toMatch(line);
      const check = await runCli(["check"], { cwd: setup.cwd, env: ENV });
      expect(check.code).not.toBe(0);
      expect(check.stdout + check.stderr).toMatch(line);
      // No value is ever shown.
      for (const value of Object.values(TOKEN_VALUES))
        expect(start.stdout + start.stderr + check.stdout).not.toContain(value);
    });
  }

  test("service check lists each token's name, role and apps, never its value", async () => {
    const setup = tokenSetup();
    const check = await runCli(["check"], { cwd: setup.cwd, env: ENV });
    expect(check.stdout).toContain("grafana (read), ci-web (deploy: web), ops (admin)");
    for (const value of Object.values(TOKEN_VALUES)) expect(check.stdout + check.stderr).not.toContain(value);
  });
});

describe("who acted: token:<name>@<address>", () => {
  test("a deploy asked for with ci-web is recorded as token:ci-web; through its dashboard session as token:ci-web:alice", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const record = async (id: string) =>
      waitFor(async () => {
        const res = await fetch(`${server.admin}/api/deploys/${id}`, { headers: bearer() });
        const json = res.ok ? ((await res.json()) as { status: string; actor: string }) : undefined;
        return json && hasEnded(json.status) ? json : undefined;
      }, `deploy ${id} to end`);
    const res = await fetch(`${server.admin}/api/apps/web/deploy`, {
      method: "POST",
      headers: bearer(TOKEN_VALUES["ci-web"]),
    });
    const { id } = (await res.json()) as { id: string };
    expect((await record(id)).actor).toBe("token:ci-web@127.0.0.1");

    const login = await fetch(`${server.admin}/login`, {
      method: "POST",
      body: new URLSearchParams({ token: TOKEN_VALUES["ci-web"], label: "alice" }),
      redirect: "manual",
    });
    await login.text();
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const again = await fetch(`${server.admin}/api/apps/web/deploy`, { method: "POST", headers: { cookie } });
    const second = (await again.json()) as { id: string };
    expect((await record(second.id)).actor).toBe("token:ci-web:alice@127.0.0.1");
  });
});
