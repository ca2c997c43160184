/**
 * docs/admin.md "People": what the start and `service check` say of adminOidc and adminTrustedHeader (a role open to
 * any account warned of; an http:// issuer off loopback, a proxy without `from`, a secret file open to others, no
 * adminPublicUrl refused), the login page without the token form (`adminTokenLogin: false`) and the session's
 * length (`adminSessionHours`).
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN, bearer, startAdmin } from "../_support/admin-helpers.ts";
import { makeRepo, runCli, SECRET, tempDir } from "../_support/helpers.ts";
import { writeToken } from "../_support/token-fixtures.ts";

const ENV = { SERVICE_SECRET: SECRET, SERVICE_ADMIN_PORT: "0", SERVICE_ADMIN_TOKEN: ADMIN_TOKEN, SERVICE_PORT: "0" };

/** A service directory whose service.yaml has `lines` after its repository; `secret` is a 0600 file's path. */
function setup(lines: (secret: string) => string[], mode = 0o600) {
  const cwd = tempDir("service-people-");
  const secret = join(cwd, "secret");
  writeToken(secret, "a-secret-of-the-sign-in-0123456789", mode);
  const repo = makeRepo();
  writeFileSync(
    join(cwd, "service.yaml"),
    [`repoPath: ${repo.clone}`, "runScript: 'true'", ...lines(secret), ""].join("\n"),
  );
  return cwd;
}

const oidc = (secret: string, issuer = "https://id.example.com/realms/acme", roles = "{ admin: [ops] }") => [
  "adminPublicUrl: https://deploy.example.com/admin",
  "adminOidc:",
  `  issuer: ${issuer}`,
  "  clientId: deploy-dashboard",
  `  clientSecretFile: ${secret}`,
  "  name: Acme SSO",
  `  roles: ${roles}`,
];

describe("adminOidc and adminTrustedHeader as the start and service check see them", () => {
  test('"*" where the operator writes it: the start and service check warn that any account may have that role', async () => {
    const cwd = setup((secret) => oidc(secret, undefined, '{ admin: [ops], read: ["*"] }'));
    const line = "any account at https://id.example.com/realms/acme may read: is sign-up closed?";
    const check = await runCli(["check"], { cwd, env: ENV });
    expect(check.stdout + check.stderr).toContain(line);
    expect(check.stdout).toContain(
      "Acme SSO at https://id.example.com/realms/acme (client deploy-dashboard, back to https://deploy.example.com/admin/oidc/callback; roles from groups: admin: ops; read: *)",
    );
    await using server = await startAdmin(cwd);
    expect(server.stdout.text + server.stderr.text).toContain(line);
  });

  const refused: { what: string; lines: (secret: string) => string[]; line: string; mode?: number }[] = [
    {
      what: "an http:// issuer off loopback",
      lines: (secret) => oidc(secret, "http://id.example.com"),
      line: "http:// is accepted only on a loopback address",
    },
    {
      what: "a client secret file other users can read",
      lines: (secret) => oidc(secret),
      mode: 0o644,
      line: "can be read by other users (mode 0644)",
    },
    {
      what: "adminOidc without adminPublicUrl",
      lines: (secret) => oidc(secret).slice(1),
      line: "adminOidc: set adminPublicUrl",
    },
    {
      what: "a role for an app the config does not name",
      lines: (secret) => oidc(secret, undefined, "{ deploy: { web: [web-team] } }"),
      line: 'adminOidc.roles.deploy: unknown app "web"',
    },
    {
      what: "adminTrustedHeader without from",
      lines: (secret) => [
        "adminTrustedHeader:",
        "  header: Remote-User",
        `  secretFile: ${secret}`,
        "  roles: { read: [eng] }",
      ],
      line: "from: required: the proxy's addresses (like [127.0.0.1/32]); there is no default",
    },
    {
      what: "adminTrustedHeader without secretFile",
      lines: () => [
        "adminTrustedHeader:",
        "  header: Remote-User",
        "  from: [127.0.0.1/32]",
        "  roles: { read: [eng] }",
      ],
      line: "secretFile: required",
    },
    {
      what: "roles that give no one anything",
      lines: (secret) => oidc(secret, undefined, "{ claim: groups }"),
      line: "give at least one of admin, deploy, read (no one has a role by default)",
    },
  ];
  for (const { what, lines, line, mode } of refused)
    test(`${what}: service check lists the problem, the start refuses with it`, async () => {
      const cwd = setup(lines, mode);
      const check = await runCli(["check"], { cwd, env: ENV });
      expect(check.code).not.toBe(0);
      expect(check.stdout + check.stderr).toContain(line);
      const start = await runCli([], { cwd, env: { ...ENV, SERVICE_HOSTNAME: "127.0.0.1" } });
      expect(start.code).not.toBe(0);
      expect(start.stdout + start.stderr).toContain(line);
    });
});

describe("adminTokenLogin and adminSessionHours", () => {
  test("adminTokenLogin: false: the login page offers the provider only, POST /login is refused, a Bearer token still works", async () => {
    const cwd = setup((secret) => [...oidc(secret), "adminTokenLogin: false"]);
    await using server = await startAdmin(cwd);
    const page = await fetch(`${server.admin}/`);
    const html = await page.text();
    expect(page.status).toBe(401);
    expect(html).toContain(">Sign in with Acme SSO</a>");
    expect(html).not.toContain('name="token"');
    const login = await fetch(`${server.admin}/login`, {
      method: "POST",
      body: new URLSearchParams({ token: ADMIN_TOKEN }),
    });
    expect(login.status).toBe(403);
    expect(login.headers.get("set-cookie")).toBeNull();
    expect((await fetch(`${server.admin}/api/whoami`, { headers: bearer() })).status).toBe(200);
  });

  test("the token form beside the provider's button by default; adminSessionHours sets the session's length", async () => {
    const cwd = setup((secret) => [...oidc(secret), "adminSessionHours: 2"]);
    await using server = await startAdmin(cwd);
    const html = await (await fetch(`${server.admin}/`)).text();
    expect(html).toContain(">Sign in with Acme SSO</a>");
    expect(html).toContain('name="token"');
    const login = await fetch(`${server.admin}/login`, {
      method: "POST",
      body: new URLSearchParams({ token: ADMIN_TOKEN }),
      redirect: "manual",
    });
    expect(login.headers.get("set-cookie")).toMatch(/; Max-Age=7200(;|$)/);
  });
});
