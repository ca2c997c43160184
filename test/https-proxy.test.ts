/**
 * SPEC item 8 for real: Caddy (Debian's package), configured from the Caddyfile the HTTPS setup writes, with
 * `tls internal` on loopback, in front of the service. An HTTPS POST through it streams live and ends with
 * `[done] ok=true`. Skipped where Caddy is not installed; `.ci/run` installs it.
 */
import { describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { caddyfile } from "../src/https.ts";
import { makeGate, StreamReader } from "./gate.ts";
import { lastLine, makeRepo, SECRET, startServer, tempDir, waitFor } from "./helpers.ts";

const noCaddy = Bun.which("caddy") === null;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("HTTPS through the generated Caddy config", () => {
  test.skipIf(noCaddy)("an HTTPS POST through Caddy streams the deploy live and ends with [done] ok=true", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const service = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: gate.script, ...gate.env });
    const home = tempDir("service-caddy-");
    const [httpsPort, httpPort] = [await freePort(), await freePort()];
    const config = join(home, "Caddyfile");
    writeFileSync(
      config,
      caddyfile(
        { domain: "localhost", port: service.port, runTimeoutMs: 60_000, maxBodyBytes: 1_000_000 },
        {
          address: `https://localhost:${httpsPort}`,
          tlsInternal: true,
          globalOptions: ["admin off", "skip_install_trust", `http_port ${httpPort}`, `https_port ${httpsPort}`, "auto_https disable_redirects"],
        },
      ),
    );
    const caddy = Bun.spawn(["caddy", "run", "--config", config, "--adapter", "caddyfile"], {
      cwd: home,
      env: { ...process.env, HOME: home, XDG_DATA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") },
      stdout: "pipe",
      stderr: "pipe",
    });
    const url = `https://localhost:${httpsPort}/`;
    const tls = { rejectUnauthorized: false };
    try {
      // Caddy is up once it answers over TLS (a GET is a 404 from the service behind it).
      await waitFor(async () => {
        if (caddy.exitCode !== null) throw new Error(`caddy exited with ${caddy.exitCode}: ${await new Response(caddy.stderr).text()}`);
        try {
          const res = await fetch(url, { tls } as RequestInit);
          await res.text();
          return res.status === 404;
        } catch {
          return false;
        }
      }, "Caddy to serve HTTPS");
      const res = await fetch(url, { method: "POST", headers: { "x-service-secret": SECRET }, tls } as RequestInit);
      expect(res.status).toBe(200);
      const reader = new StreamReader(res);
      // Live: the deploy's first lines come through the proxy while the script still waits at its gate.
      await waitFor(() => reader.text.includes("[run] $"), "the run line through the proxy");
      expect(gate.lines()).toHaveLength(1);
      expect(reader.text).not.toContain("[done]");
      gate.open();
      expect(lastLine(await reader.done)).toBe("[done] ok=true exitCode=0");
      const wrong = await fetch(url, { method: "POST", headers: { "x-service-secret": "wrong" }, tls } as RequestInit);
      expect(wrong.status).toBe(401);
      await wrong.text();
    } finally {
      caddy.kill("SIGKILL");
      gate.open();
      await service.stop();
    }
  }, 60_000);
});
