/**
 * The service's default port (3141) is held for the whole run, as a developer's own service on this machine would
 * hold it: a test that leans on the default port being free (a server started without `SERVICE_PORT: "0"`, a
 * request sent to 3141) fails on every machine, not only on one where the port is taken. A second preload of the
 * run (bunfig.toml); when another process holds the port already, that one plays the part.
 */
import { afterAll } from "bun:test";

/** The default `port` of the configuration (docs/configuration.md). */
export const DEFAULT_PORT = 3141;

let holder: { stop(force?: boolean): unknown } | undefined;
try {
  holder = Bun.serve({
    hostname: "127.0.0.1",
    port: DEFAULT_PORT,
    reusePort: false,
    fetch: () => new Response("not the service under test: tests never use the default port\n", { status: 418 }),
  });
} catch {
  // Taken already (a service of the developer's, another run): it holds the port for this run.
}

afterAll(() => {
  holder?.stop(true);
});
