/**
 * A real OpenID provider for the sign-in tests (test/_support/oidc-provider.mjs, npm `oidc-provider` run by Node),
 * its users and client given here; and the steps of a sign-in in Chromium.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { collect, waitFor } from "./helpers.ts";
import { ROOT } from "./repo.ts";

export const CLIENT_ID = "deploy-dashboard";
export const CLIENT_SECRET = "client-secret-0123456789abcdef";

/** A user of the provider: the claims it gives (sub is the login). */
export type Claims = { preferred_username?: string; email?: string; email_verified?: boolean; groups?: string[] };

export interface Provider extends AsyncDisposable {
  issuer: string;
  /** What the relay does to the next ID tokens: `forged`, `expired`, or `as-is`. */
  idTokens(mode: "forged" | "expired" | "as-is"): Promise<void>;
}

/**
 * Starts the provider on 127.0.0.1 (its issuer named `localhost`: another site than the service's); with
 * `userInfoOnly` the claims are in the user info only, not in the ID token.
 */
export async function startProvider(
  redirectUris: string[],
  users: Record<string, Claims>,
  more: { userInfoOnly?: boolean } = {},
): Promise<Provider> {
  const options = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris, users, host: "localhost", ...more };
  const proc = Bun.spawn(["node", join(ROOT, "test/_support/oidc-provider.mjs"), JSON.stringify(options)], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = { text: "" };
  const err = { text: "" };
  void collect(proc.stdout, out);
  void collect(proc.stderr, err);
  const match = await waitFor(() => {
    if (proc.exitCode !== null) throw new Error(`the provider exited: ${err.text}`);
    return /^issuer (\S+)$/m.exec(out.text);
  }, "the OpenID provider");
  const issuer = match[1]!;
  return {
    issuer,
    async idTokens(mode) {
      const res = await fetch(`${issuer}/__test/id-token`, { method: "POST", body: mode });
      if (!res.ok) throw new Error(`the provider's relay answered ${res.status}`);
    },
    async [Symbol.asyncDispose]() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}

/**
 * Signs in at the dashboard `admin` (its root URL, ending in "/") as `login`: "Sign in with <name>", the provider's
 * login form, its consent. Returns once the browser is back at the service.
 */
export async function signIn(page: Page, admin: string, login: string, name = "Test SSO"): Promise<void> {
  page.setDefaultTimeout(20_000);
  await page.goto(admin);
  await page.getByRole("link", { name: `Sign in with ${name}` }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.locator('button[type="submit"]').click();
  // The provider asks for consent once per client and user.
  const consent = page.getByRole("button", { name: "Continue" });
  const back = new URL(admin).origin;
  await waitFor(async () => {
    if (page.url().startsWith(back)) return true;
    if (await consent.isVisible()) await consent.click();
    return false;
  }, "the way back from the provider");
}
