/** Fixtures of the admin listener's tests: the real CLI with the admin listener on. */
import { SECRET, startServer, type RunningServer } from "./helpers.ts";

export const ADMIN_TOKEN = "admin-token-0123456789abcdef";

/** The Authorization header of a request with `token`. */
export const bearer = (token = ADMIN_TOKEN) => ({ authorization: `Bearer ${token}` });

/** The admin listener's URL from the banner. */
export function adminUrl(server: RunningServer): string {
  const match = /^admin: (http:\/\/\S+?)\/? /m.exec(server.stdout.text);
  if (!match) throw new Error(`no admin line in the banner: ${server.stdout.text}`);
  return match[1]!;
}

/** The real CLI with the admin listener on, and the listener's URL. */
export interface AdminServer extends RunningServer {
  /** The admin listener's URL. */
  admin: string;
  /** The server itself, for `const { server, admin } = await startAdmin(…)`. */
  server: RunningServer;
}

/** `await using server = await startAdmin(cwd)`: the CLI with SECRET and the admin listener on ADMIN_TOKEN. */
export async function startAdmin(cwd: string, env: Record<string, string | undefined> = {}): Promise<AdminServer> {
  const server = await startServer(cwd, {
    SERVICE_SECRET: SECRET,
    SERVICE_ADMIN_PORT: "0",
    SERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
    ...env,
  });
  return Object.assign(server, { admin: adminUrl(server), server });
}

/** Logs in on the admin listener with `token`: the session cookie (`service_session=…`) a browser sends back. */
export async function adminSession(admin: string, token = ADMIN_TOKEN): Promise<string> {
  const login = await fetch(`${admin}/login`, {
    method: "POST",
    body: new URLSearchParams({ token }),
    redirect: "manual",
  });
  const session = login.headers.get("set-cookie")!.split(";")[0]!;
  await login.text();
  return session;
}

/**
 * Headers of requests another site makes a logged-in browser send, each carrying the `session` cookie: a form
 * posted from another origin (first), fetch metadata saying cross-site or same-site, an opaque origin.
 */
export function crossSiteHeaders(session: string): Record<string, string>[] {
  return [
    { cookie: session, origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" },
    { cookie: session, "sec-fetch-site": "cross-site" },
    { cookie: session, "sec-fetch-site": "same-site" },
    { cookie: session, origin: "null" },
  ];
}
