/** Fixtures of the admin listener's tests: the real CLI with the admin listener on. */
import { SECRET, startServer, type RunningServer } from "./helpers.ts";

export const ADMIN_TOKEN = "admin-token-0123456789abcdef";

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
