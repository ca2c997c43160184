/**
 * The reverse proxies of the HTTPS and admin tests, from Debian's packages, on loopback: Caddy with `tls internal`
 * and its logs read as they come (its readiness and its certificates are waited for on its own log lines), nginx
 * with a self-signed certificate and everything under a temporary prefix (no /etc, /var or root needed).
 */
import { afterRun } from "./after-run.ts";
import { join } from "node:path";
import { waitFor } from "./helpers.ts";
import { nginxPath } from "./proxies.ts";

export { freePort, nginxMain } from "./proxies.ts";

export const noCaddy = Bun.which("caddy") === null;
export const nginx = nginxPath ?? null;
export const openssl = Bun.which("openssl");

/** A self-signed certificate is accepted by the tests' fetches. */
export const tls = { rejectUnauthorized: false };

/** A proxy process whose output is read as it comes (a full pipe never stalls it). */
export interface ProxyProcess {
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  /** Everything it wrote so far, stdout and stderr. */
  output(): string;
  /**
   * Resolves once a line of its output satisfies `seen`; fails at once, with the output, when the process exits
   * first. The deadline only turns a proxy that hangs into a message.
   */
  waitForLine(seen: (line: string) => boolean, what: string): Promise<string>;
  kill(signal?: NodeJS.Signals): void;
  /** `await using proxy = …`: killed when the block ends. */
  [Symbol.asyncDispose](): Promise<void>;
}

const started = new Set<ProxyProcess>();
afterRun(() => {
  for (const proxy of started) proxy.proc.kill("SIGKILL");
});

function spawnProxy(command: string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}) {
  const proc = Bun.spawn(command, { ...options, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let text = "";
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  };
  const reading = Promise.all([read(proc.stdout), read(proc.stderr)]);
  const proxy: ProxyProcess = {
    proc,
    output: () => text,
    kill: (signal) => proc.kill(signal),
    waitForLine: (seen, what) =>
      waitFor(
        () => {
          const line = text.split("\n").find(seen);
          if (line) return line;
          if (proc.exitCode !== null)
            throw new Error(`${command[0]} exited with ${proc.exitCode} before ${what}:\n${text}`);
          return undefined;
        },
        what,
        50_000,
      ),
    async [Symbol.asyncDispose]() {
      proc.kill("SIGKILL");
      await proc.exited;
      await reading;
      started.delete(proxy);
    },
  };
  started.add(proxy);
  return proxy;
}

/** Caddy's data and config dirs (which `caddy validate` writes too) under `home`, not the real HOME. */
export const caddyEnv = (home: string) => ({
  XDG_DATA_HOME: join(home, "data"),
  XDG_CONFIG_HOME: join(home, "config"),
});

/** Runs `action` with Caddy's data and config dirs in `home`. */
export function withCaddyHome<T>(home: string, action: () => T): T {
  const saved = { XDG_DATA_HOME: process.env.XDG_DATA_HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
  Object.assign(process.env, caddyEnv(home));
  try {
    return action();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

/** One JSON log line of Caddy, or undefined for anything else. */
function caddyLine(line: string): { msg?: string; identifier?: string } | undefined {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

export interface CaddyProcess extends ProxyProcess {
  /** Resolves once Caddy serves its initial configuration. */
  ready(): Promise<void>;
  /** Resolves once Caddy has the certificate of `domain` (obtained in the background after a load). */
  certificate(domain: string): Promise<void>;
}

/** `caddy run` with the Caddyfile `config`, its state under `home`, `env` added to its environment. */
export function startCaddy(config: string, home: string, env: Record<string, string> = {}): CaddyProcess {
  const proxy = spawnProxy(["caddy", "run", "--config", config, "--adapter", "caddyfile"], {
    cwd: home,
    env: { ...process.env, HOME: home, ...caddyEnv(home), ...env },
  });
  return Object.assign(proxy, {
    ready: async () => {
      await proxy.waitForLine((line) => caddyLine(line)?.msg === "serving initial configuration", "Caddy to serve");
    },
    certificate: async (domain: string) => {
      await proxy.waitForLine((line) => {
        const entry = caddyLine(line);
        return entry?.msg === "certificate obtained successfully" && entry.identifier === domain;
      }, `Caddy's certificate for ${domain}`);
    },
  });
}

/** A self-signed certificate for localhost in `dir`. */
export function selfSigned(dir: string): { certificate: string; certificateKey: string } {
  const certificate = join(dir, "cert.pem");
  const certificateKey = join(dir, "key.pem");
  const made = Bun.spawnSync(
    [
      openssl!,
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-keyout",
      certificateKey,
      "-out",
      certificate,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr}`);
  return { certificate, certificateKey };
}

/** nginx in the foreground with the nginx.conf `main` (see nginxMain). */
export function startNginx(prefix: string, main: string): ProxyProcess {
  return spawnProxy([nginx!, "-p", prefix, "-c", main]);
}

/** Waits until `url` answers over TLS with `status`, failing early with the proxy's output if it exited. */
export async function waitForProxy(proxy: ProxyProcess, url: string, status: number, what: string): Promise<void> {
  await waitFor(async () => {
    if (proxy.proc.exitCode !== null) throw new Error(`${what} exited with ${proxy.proc.exitCode}: ${proxy.output()}`);
    try {
      const res = await fetch(url, { tls, signal: AbortSignal.timeout(10_000) } as RequestInit);
      await res.text();
      return res.status === status;
    } catch {
      return false;
    }
  }, `${what} to serve ${url}`);
}
