import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Readable } from "node:stream";
import { ConnectionGuard, TOO_MANY_CONNECTIONS } from "./connections.ts";
import type { Runtime, ServeOptions } from "./types.ts";

/** The connections of every listener of this process (see connections.ts): one descriptor each under Node. */
const guard = new ConnectionGuard(1);

function toRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(requestUrl(req.headers.host, req.url), {
    method: req.method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>) : undefined,
    // @ts-expect-error Node's fetch needs `duplex` for a streamed body; the DOM types do not know it.
    duplex: "half",
  });
}

/** The absolute URL of a request; a Host that makes no URL (empty, `a b`, `[::1`) falls back to localhost. */
function requestUrl(host: string | undefined, target = "/"): string {
  const path = target.startsWith("/") ? target : `/${target}`;
  try {
    return new URL(`http://${host ?? "localhost"}${path}`).href;
  } catch {
    return `http://localhost${path}`;
  }
}

/** Writes a web Response to a Node response, chunk by chunk, honouring backpressure; stops when the client goes. */
async function send(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  res.on("close", () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve).once("close", resolve));
      if (res.destroyed) break;
    }
  } catch {}
  res.end();
}

/** The Node.js side of the runtime seam. */
export const runtime: Runtime = {
  async serve(options: ServeOptions) {
    // Node runs the requests pipelined on one connection at once and writes their answers in order, so a request
    // behind an answer that closes the connection (a deploy's) would run and never be answered. Each request
    // waits for the answer ahead of it, and is dropped unanswered when that answer closed the connection.
    const ahead = new WeakMap<object, Promise<boolean>>();
    const server = createServer(async (req, res) => {
      const previous = ahead.get(req.socket);
      let settle: (closes: boolean) => void = () => {};
      ahead.set(req.socket, new Promise<boolean>((resolve) => (settle = resolve)));
      let closes = true;
      try {
        if (previous && (await previous)) return void res.destroy();
        let response: Response;
        try {
          response = await options.fetch(toRequest(req), {
            noTimeout: () => req.socket.setTimeout(0),
            remoteAddress: () => req.socket.remoteAddress ?? "",
          });
        } catch (error) {
          response = options.error(error as Error);
        }
        closes = response.headers.get("connection")?.toLowerCase() === "close";
        await send(response, res);
      } finally {
        settle(closes);
      }
    });
    server.setTimeout(options.idleTimeoutSeconds * 1000);
    // Counted as it is accepted, before it sends anything: a connection past a bound is answered and closed.
    server.on("connection", (socket: Socket) => {
      if (!options.bounded) return;
      const address = socket.remoteAddress ?? "";
      if (!guard.admit(address)) {
        socket.end(TOO_MANY_CONNECTIONS);
        return;
      }
      socket.once("close", () => guard.release(address));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port, options.hostname, () => resolve());
    });
    return {
      port: (server.address() as AddressInfo).port,
      stop: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        }),
    };
  },

  async runWritingFiles(argv, options) {
    const stdout = openSync(options.into.stdout, "w", 0o600);
    const stderr = openSync(options.into.stderr, "w", 0o600);
    try {
      const child = spawn(argv[0]!, argv.slice(1), {
        cwd: options.cwd,
        env: options.env as NodeJS.ProcessEnv,
        stdio: ["ignore", stdout, stderr],
      });
      return await new Promise<number | null>((resolve, reject) => {
        child.once("error", reject);
        child.once("exit", (code) => resolve(code));
      });
    } finally {
      closeSync(stdout);
      closeSync(stderr);
    }
  },

  spawn(argv, options) {
    return new Promise((resolve, reject) => {
      const child = spawn(argv[0]!, argv.slice(1), {
        cwd: options.cwd,
        env: options.env as NodeJS.ProcessEnv,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      const exited = new Promise<{ exitCode: number | null; signal: string | null }>((done) =>
        child.once("exit", (exitCode, signal) => done({ exitCode, signal })),
      );
      child.once("error", reject);
      child.once("spawn", () =>
        resolve({
          pid: child.pid!,
          stdout: Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>,
          stderr: Readable.toWeb(child.stderr!) as unknown as ReadableStream<Uint8Array>,
          exited,
        }),
      );
    });
  },
};
