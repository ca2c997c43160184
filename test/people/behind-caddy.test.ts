/**
 * The people's sign-in behind Caddy, with the docs' snippets (docs/admin.md): the trusted header's `forward_auth`
 * recipe, a sign-in portal in front of the listener naming the user; and the OpenID sign-in on the proxy's sub-path
 * (`adminPublicUrl` with `/admin`), in Chromium against a real provider.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, launchBrowser, shown } from "../_support/browser.ts";
import { docBlock } from "../_support/doc-snippets.ts";
import { makeRepo, tempDir } from "../_support/helpers.ts";
import { CLIENT_ID, CLIENT_SECRET, signIn, startProvider } from "../_support/oidc.ts";
import { freePort, noCaddy, startCaddy, waitForProxy } from "../_support/proxy-helpers.ts";
import { writeToken } from "../_support/token-fixtures.ts";

const browser = hasBrowser("the OpenID sign-in behind Caddy");
const PROXY_SECRET = "proxy-secret-0123456789abcdef";

/** Caddy on http://127.0.0.1:<port> with `snippet` in its site block. */
async function caddyWith(snippet: string, env: Record<string, string> = {}) {
  const home = tempDir("service-caddy-people-");
  const port = await freePort();
  const config = join(home, "Caddyfile");
  writeFileSync(
    config,
    [
      "{",
      "\tadmin off",
      "\tskip_install_trust",
      "\tauto_https off",
      "}",
      "",
      `http://127.0.0.1:${port} {`,
      snippet,
      "}",
      "",
    ].join("\n"),
  );
  return { proxy: startCaddy(config, home, env), url: `http://127.0.0.1:${port}` };
}

describe("behind Caddy (docs/admin.md)", () => {
  test.skipIf(noCaddy)(
    "forward_auth as the docs give it: the portal's user and groups reach the service, the ones the browser sent do not",
    async () => {
      // The sign-in portal: a cookie names the user it signed in; no cookie, 401.
      await using portal = Bun.serve({
        port: 0,
        hostname: "127.0.0.1",
        fetch(request) {
          const user = /portal=(\w+)/.exec(request.headers.get("cookie") ?? "")?.[1];
          if (user === "alice")
            return new Response(null, { headers: { "remote-user": "alice", "remote-groups": "admins" } });
          if (user === "bob") return new Response(null, { headers: { "remote-user": "bob" } });
          return new Response("sign in first", { status: 401 });
        },
      });
      const cwd = tempDir("service-forward-auth-");
      const secretFile = join(cwd, "proxy-secret");
      writeToken(secretFile, PROXY_SECRET);
      writeFileSync(
        join(cwd, "service.yaml"),
        [
          `repoPath: ${makeRepo().clone}`,
          "runScript: 'true'",
          "adminTrustedHeader:",
          "  header: Remote-User",
          "  groupsHeader: Remote-Groups",
          "  from: [127.0.0.1/32]",
          `  secretFile: ${secretFile}`,
          "  roles: { admin: [admins], read: [dev] }",
          "",
        ].join("\n"),
      );
      await using service = await startAdmin(cwd);
      const snippet = docBlock("docs/admin.md", "caddy", "A header from a trusted proxy")
        .replaceAll("127.0.0.1:9091", `127.0.0.1:${portal.port}`)
        .replaceAll("127.0.0.1:9090", `127.0.0.1:${new URL(service.admin).port}`);
      const { proxy, url } = await caddyWith(snippet, { SERVICE_PROXY_SECRET: PROXY_SECRET });
      await using _caddy = proxy;
      const whoami = `${url}/admin/api/whoami`;
      await waitForProxy(proxy, whoami, 401, "Caddy");
      const ask = async (headers: Record<string, string>) => {
        const res = await fetch(whoami, { headers });
        return { status: res.status, body: await res.text() };
      };
      expect(await ask({ cookie: "portal=alice", "remote-user": "root", "remote-groups": "dev" })).toEqual({
        status: 200,
        body: `${JSON.stringify({ name: "proxy:alice", role: "admin", apps: null })}\n`,
      });
      // bob's portal answer has no groups: the ones his browser sent are dropped, not believed.
      const bob = await ask({ cookie: "portal=bob", "remote-groups": "admins" });
      expect(bob.status).toBe(403);
      expect(JSON.parse(bob.body).message).toBe("signed in as bob, who has no role here");
      expect((await ask({ "remote-user": "alice", "remote-groups": "admins" })).status).toBe(401);
      // Around the proxy, straight to the listener: the headers without the secret are refused.
      const direct = await fetch(`${service.admin}/api/whoami`, {
        headers: { "remote-user": "alice", "remote-groups": "admins" },
      });
      expect(direct.status).toBe(401);
    },
    60_000,
  );

  test.skipIf(noCaddy || !browser)(
    "the OpenID sign-in on the proxy's sub-path: the provider sends the browser back to <adminPublicUrl>/oidc/callback",
    async () => {
      const adminPort = await freePort();
      const snippet = docBlock("docs/admin.md", "caddy", "Reaching it").replaceAll(
        "127.0.0.1:9090",
        `127.0.0.1:${adminPort}`,
      );
      const { proxy, url } = await caddyWith(snippet);
      await using _caddy = proxy;
      const publicUrl = `${url}/admin`;
      await using provider = await startProvider([`${publicUrl}/oidc/callback`], {
        alice: { preferred_username: "alice", groups: ["ops"] },
      });
      const cwd = tempDir("service-oidc-subpath-");
      const secretFile = join(cwd, "oidc-secret");
      writeToken(secretFile, CLIENT_SECRET);
      writeFileSync(
        join(cwd, "service.yaml"),
        [
          `repoPath: ${makeRepo().clone}`,
          "runScript: 'true'",
          "trustProxy: true",
          `adminPublicUrl: ${publicUrl}`,
          "adminOidc:",
          `  issuer: ${provider.issuer}`,
          `  clientId: ${CLIENT_ID}`,
          `  clientSecretFile: ${secretFile}`,
          "  name: Test SSO",
          "  roles: { admin: [ops] }",
          "",
        ].join("\n"),
      );
      await using _service = await startAdmin(cwd, { SERVICE_ADMIN_PORT: String(adminPort) });
      await waitForProxy(proxy, `${publicUrl}/`, 401, "Caddy");
      await using context = await launchBrowser();
      const page = await context.newPage();
      await signIn(page, `${publicUrl}/`, "alice");
      await shown(page.getByRole("region", { name: "default" }));
      expect(page.url()).toBe(`${publicUrl}/`);
      const who = await page.evaluate(async () => (await fetch("api/whoami")).json());
      expect(who).toEqual({ name: "oidc:alice", role: "admin", apps: null });
      await page.getByRole("button", { name: "Log out" }).click();
      await shown(page.getByRole("link", { name: "Sign in with Test SSO" }));
      expect(page.url()).toBe(`${publicUrl}/`);
    },
    90_000,
  );
});
