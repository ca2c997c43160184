/**
 * docs/admin.md "Sign in with your provider": `adminOidc` against a real OpenID provider (npm `oidc-provider`) on
 * 127.0.0.1, in Chromium: the authorization code flow with PKCE, state and nonce; the role from the groups claim;
 * a user with no role refused; a forged or expired ID token refused; a replayed state refused; logout; the roles in
 * force applied to open sessions; an admin ending a person's sessions.
 */
import { readAudit } from "../../src/audit/read.ts";
import { auditDir } from "../../src/audit/trail.ts";
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { ADMIN_TOKEN, bearer, startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, launchBrowser, shown } from "../_support/browser.ts";
import { makeRepo, tempDir, waitFor } from "../_support/helpers.ts";
import { CLIENT_ID, CLIENT_SECRET, type Claims, signIn, startProvider } from "../_support/oidc.ts";
import { freePort } from "../_support/proxies.ts";
import { writeToken } from "../_support/token-fixtures.ts";

const browser = hasBrowser("the OpenID sign-in tests");

const USERS: Record<string, Claims> = {
  alice: { preferred_username: "alice", groups: ["ops", "engineering"] },
  bob: { email: "bob@example.com", email_verified: true, groups: ["web-team"] },
  carol: { email: "carol@example.com", email_verified: false, groups: ["engineering"] },
  mallory: { preferred_username: "mallory", groups: ["sales"] },
};

const ROLES = "{ admin: [ops], deploy: { default: [web-team] }, read: [engineering] }";

/** service.yaml signing in at `issuer`, coming back to `publicUrl`. */
function writeConfig(cwd: string, issuer: string, publicUrl: string, roles = ROLES, extra: string[] = []): void {
  const secretFile = join(cwd, "oidc-secret");
  writeToken(secretFile, CLIENT_SECRET);
  const repo = makeRepo();
  writeFileSync(
    join(cwd, "service.yaml"),
    [
      `repoPath: ${repo.clone}`,
      "runScript: 'true'",
      `adminPublicUrl: ${publicUrl}`,
      "adminOidc:",
      `  issuer: ${issuer}`,
      `  clientId: ${CLIENT_ID}`,
      `  clientSecretFile: ${secretFile}`,
      "  name: Test SSO",
      `  roles: ${roles}`,
      ...extra,
      "",
    ].join("\n"),
  );
}

/** A provider and a service that signs in with it, on an admin port known before the start (the callback's). */
async function signingIn(roles = ROLES, more: { userInfoOnly?: boolean } = {}) {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const provider = await startProvider([`${publicUrl}/oidc/callback`], USERS, more);
  const cwd = tempDir("service-oidc-");
  writeConfig(cwd, provider.issuer, publicUrl, roles);
  const server = await startAdmin(cwd, { SERVICE_ADMIN_PORT: String(port) });
  return {
    provider,
    server,
    cwd,
    admin: `${publicUrl}/`,
    async [Symbol.asyncDispose]() {
      await server.stop();
      await provider[Symbol.asyncDispose]();
    },
  };
}

/** GET /api/whoami from the page, with its session cookie (whichever page it is on). */
const whoami = (page: Page) =>
  page.evaluate(async () => {
    const res = await fetch("/api/whoami");
    return { status: res.status, body: res.status === 200 ? await res.json() : undefined };
  });

const alert = (page: Page) => page.getByRole("alert").textContent();

describe("adminOidc: sign in with the team's OpenID provider", () => {
  test.skipIf(!browser)(
    "a user signs in, gets the role of their groups, is recorded by name, and logs out",
    async () => {
      await using setup = await signingIn();
      await using context = await launchBrowser();
      const page = await context.newPage();
      await signIn(page, setup.admin, "alice");
      await shown(page.getByRole("region", { name: "default" }));
      expect(await whoami(page)).toEqual({ status: 200, body: { name: "oidc:alice", role: "admin", apps: null } });
      // The session cookie is the dashboard's; the sign-in's own cookie is gone.
      expect((await context.cookies(setup.admin)).map((c) => c.name)).toEqual(["service_session"]);
      const id = await page.evaluate(async () => {
        const res = await fetch("api/apps/default/deploy", { method: "POST" });
        return ((await res.json()) as { id: string }).id;
      });
      const record = (await (await fetch(`${setup.admin}api/deploys/${id}`, { headers: bearer() })).json()) as {
        actor: string;
        sub: string;
      };
      expect(record.actor).toBe("oidc:alice@127.0.0.1");
      // People are matched by their subject: the record and the audit keep it.
      expect(record.sub).toBe("alice");
      const asked = readAudit(auditDir(setup.cwd)).find((line) => line.action === "deploy asked");
      expect(asked).toMatchObject({ actor: "oidc:alice", sub: "alice" });
      await page.getByRole("button", { name: "Log out" }).click();
      await shown(page.getByRole("link", { name: "Sign in with Test SSO" }));
      expect((await whoami(page)).status).toBe(401);

      // No preferred_username: the verified email names the user; deploy of its app only.
      const other = await context.newPage();
      await context.clearCookies();
      await signIn(other, setup.admin, "bob");
      await shown(other.getByRole("region", { name: "default" }));
      expect(await whoami(other)).toEqual({
        status: 200,
        body: { name: "oidc:bob@example.com", role: "deploy", apps: ["default"] },
      });
      // An email not verified names no one: the subject does.
      await context.clearCookies();
      await signIn(other, setup.admin, "carol");
      await shown(other.getByRole("region", { name: "default" }));
      expect(await whoami(other)).toEqual({ status: 200, body: { name: "oidc:carol", role: "read", apps: null } });
    },
    120_000,
  );

  test.skipIf(!browser)(
    "a user no role matches is refused, naming them; a forged or an expired ID token is refused",
    async () => {
      await using setup = await signingIn();
      await using context = await launchBrowser();
      const page = await context.newPage();
      await signIn(page, setup.admin, "mallory");
      expect(await alert(page)).toBe("Signed in as mallory, who has no role here.");
      expect((await whoami(page)).status).toBe(401);

      await setup.provider.idTokens("forged");
      await context.clearCookies();
      await signIn(page, setup.admin, "alice");
      expect(await alert(page)).toBe("Not signed in: the sign-in was refused: JWT signature verification failed.");
      expect((await whoami(page)).status).toBe(401);

      await setup.provider.idTokens("expired");
      await context.clearCookies();
      await signIn(page, setup.admin, "alice");
      expect(await alert(page)).toContain('unexpected JWT "exp" (expiration time) claim value, expiration is past');
      expect((await whoami(page)).status).toBe(401);

      // The same provider, its tokens as they are: the sign-in works (the refusals were the tokens').
      await setup.provider.idTokens("as-is");
      await context.clearCookies();
      await signIn(page, setup.admin, "alice");
      await shown(page.getByRole("region", { name: "default" }));
      expect((await whoami(page)).body).toEqual({ name: "oidc:alice", role: "admin", apps: null });
      expect(setup.server.stdout.text + setup.server.stderr.text).toContain("sign-in with Test SSO refused");
    },
    120_000,
  );

  test.skipIf(!browser)(
    "a replayed callback (its state used once already) is refused",
    async () => {
      await using setup = await signingIn();
      await using context = await launchBrowser();
      const page = await context.newPage();
      const callbacks: string[] = [];
      page.on("request", (request) => {
        if (request.url().includes("/oidc/callback")) callbacks.push(request.url());
      });
      await signIn(page, setup.admin, "alice");
      await shown(page.getByRole("region", { name: "default" }));
      expect(callbacks).toHaveLength(1);
      await context.clearCookies();
      await page.goto(callbacks[0]!);
      expect(await alert(page)).toContain("this sign-in has expired or was already used");
      expect((await whoami(page)).status).toBe(401);
    },
    120_000,
  );

  test.skipIf(!browser)(
    "a change of the roles applies to an open session at its next request; an admin ends a person's sessions",
    async () => {
      await using setup = await signingIn();
      await using context = await launchBrowser();
      const page = await context.newPage();
      await signIn(page, setup.admin, "alice");
      await shown(page.getByRole("region", { name: "default" }));
      expect((await whoami(page)).body.role).toBe("admin");
      writeConfig(setup.cwd, setup.provider.issuer, setup.admin.replace(/\/$/, ""), "{ read: [ops] }");
      await waitFor(async () => (await whoami(page)).body?.role === "read", "the new roles in force");

      // Not an admin's (alice reads now; a wrong token): refused. The admin token's: alice's sessions end.
      const own = await page.evaluate(
        async () => (await fetch("/api/sessions/oidc:alice/end", { method: "POST" })).status,
      );
      expect(own).toBe(403);
      const end = (headers: Record<string, string>) =>
        fetch(`${setup.admin}api/sessions/oidc:alice/end`, { method: "POST", headers });
      expect((await end({ authorization: "Bearer wrong-token-0123456789" })).status).toBe(401);
      const ended = await end(bearer(ADMIN_TOKEN));
      expect(await ended.json()).toEqual({ actor: "oidc:alice", ended: 1 });
      expect((await whoami(page)).status).toBe(401);
    },
    120_000,
  );

  test.skipIf(!browser)(
    "a provider that puts the groups in the user info only: they are asked there",
    async () => {
      await using setup = await signingIn(ROLES, { userInfoOnly: true });
      await using context = await launchBrowser();
      const page = await context.newPage();
      await signIn(page, setup.admin, "alice");
      await shown(page.getByRole("region", { name: "default" }));
      expect(await whoami(page)).toEqual({ status: 200, body: { name: "oidc:alice", role: "admin", apps: null } });
    },
    120_000,
  );
});
