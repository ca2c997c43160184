/**
 * No test leans on the default port (3141) being free: the run holds it (test/_support/default-port.ts), as a
 * developer's own service on this machine would, so a test that starts a server without a port of its own, or
 * sends a request to 3141, fails everywhere rather than only where the port is taken.
 */
import { describe, expect, test } from "bun:test";
import { DEFAULT_PORT } from "./_support/default-port.ts";
import { makeRepo, runCli, SECRET } from "./_support/helpers.ts";

describe("the default port during the test run", () => {
  test("3141 is taken for the whole run: a server started on the default port exits 1 naming it", async () => {
    expect(() => Bun.listen({ hostname: "127.0.0.1", port: DEFAULT_PORT, socket: { data() {} } })).toThrow();
    const repo = makeRepo();
    const started = await runCli([], {
      cwd: repo.clone,
      env: { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "true" },
      timeoutMs: 15_000,
    });
    expect(started.code).toBe(1);
    expect(started.stderr).toContain(`port ${DEFAULT_PORT} is already in use`);
  });
});
