import type { Socket } from "bun";
import { ConnectionGuard, TOO_MANY_CONNECTIONS } from "./connections.ts";
import { collectGarbage } from "./gc.ts";
import type { Child, Listener, RequestControl, Runtime, ServeOptions } from "./types.ts";

/**
 * The connections of every bounded listener of this process. `Bun.serve` accepts connections it has no hook for
 * (a connection that never sends a request never reaches JavaScript), so a bounded port is a `Bun.listen` socket
 * that counts each connection and passes the admitted ones byte for byte to `Bun.serve` on a loopback port: three
 * descriptors per connection (the client's, and both ends of the inner one). An unbounded port is `Bun.serve`.
 */
const guard = new ConnectionGuard(3);

/** One admitted client connection and its inner connection to `Bun.serve`. */
interface Link {
  address: string;
  client: Socket<Link>;
  inner?: Socket<Link>;
  /** Bytes one side could not take yet: the other side is paused until it drains. */
  toInner?: Uint8Array;
  toClient?: Uint8Array;
  innerClosed: boolean;
  released: boolean;
}

/** Writes what `to` takes; the rest is kept (copied: Bun reuses the chunk) and `from` paused until `to` drains. */
function relay(chunk: Uint8Array, to: Socket<Link>, from: Socket<Link>): Uint8Array | undefined {
  collectGarbage(chunk.length);
  const written = Math.max(0, to.write(chunk));
  if (written >= chunk.length) return undefined;
  from.pause();
  return Uint8Array.prototype.slice.call(chunk, written);
}

/** A `Bun.serve` on `port`; `clients` maps an inner connection's port to the client's address (relayed ones). */
function httpServer(options: ServeOptions, port: number, hostname: string, clients?: Map<number, string>) {
  const control: RequestControl = {
    noTimeout: (request) => server.timeout(request, 0),
    remoteAddress: (request) => {
      const peer = server.requestIP(request);
      return (peer && clients?.get(peer.port)) ?? peer?.address ?? "";
    },
  };
  const server = Bun.serve({
    port,
    hostname,
    idleTimeout: options.idleTimeoutSeconds,
    maxRequestBodySize: options.maxRequestBodySize,
    development: false,
    // `development: false` alone turns SO_REUSEPORT on: a second service on the same port must fail with
    // EADDRINUSE, not share it.
    reusePort: false,
    fetch: (request) => options.fetch(request, control),
    error: (error) => options.error(error),
  });
  return server;
}

/** The Bun side of the runtime seam. */
export const runtime: Runtime = {
  async serve(options) {
    if (!options.bounded) {
      const server = httpServer(options, options.port, options.hostname);
      return { port: server.port!, stop: () => server.stop() } satisfies Listener;
    }
    /** Inner connections by their local port (what `requestIP` sees), to the client's address. */
    const clients = new Map<number, string>();
    const inner = httpServer(options, 0, "127.0.0.1", clients);
    let front: ReturnType<typeof listen>;
    try {
      front = listen(options, inner.port!, clients);
    } catch (error) {
      await inner.stop(true);
      throw error;
    }
    return {
      port: front.socket.port,
      stop: async () => {
        // No new connections; the admitted ones end as the inner server ends them, and what it sent last is
        // relayed before this resolves (the process may exit right after).
        front.socket.stop();
        await inner.stop();
        await front.relayed(STOP_RELAY_MS);
      },
    } satisfies Listener;
  },

  async runWritingFiles(argv, options) {
    const proc = Bun.spawn(argv, {
      cwd: options.cwd,
      env: options.env,
      stdin: "ignore",
      stdout: Bun.file(options.into.stdout),
      stderr: Bun.file(options.into.stderr),
    });
    await proc.exited;
    return proc.exitCode;
  },

  async spawn(argv, options): Promise<Child> {
    // Bun.spawn throws synchronously when the process cannot start; `detached` gives it its own process group.
    const proc = Bun.spawn(argv, {
      cwd: options.cwd,
      env: options.env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
    });
    return {
      pid: proc.pid,
      stdout: proc.stdout as ReadableStream<Uint8Array>,
      stderr: proc.stderr as ReadableStream<Uint8Array>,
      exited: proc.exited.then(() => ({
        exitCode: proc.exitCode,
        signal: proc.signalCode === null ? null : String(proc.signalCode),
      })),
    };
  },
};

/** How long a stop waits for the last bytes of the inner server to reach clients that read slowly. */
const STOP_RELAY_MS = 5000;

/** The public port: admits or refuses each connection, and relays the admitted ones to the inner server. */
function listen(options: ServeOptions, innerPort: number, clients: Map<number, string>) {
  const links = new Set<Link>();
  let allClosed: (() => void) | undefined;
  const release = (link: Link) => {
    links.delete(link);
    if (links.size === 0) allClosed?.();
    if (link.released) return;
    link.released = true;
    guard.release(link.address);
  };
  /** Resolves once every admitted connection has closed, or after `ms` (the rest are then cut). */
  const relayed = async (ms: number) => {
    if (links.size === 0) return;
    const timer = new Promise<void>((done) => setTimeout(done, ms).unref?.());
    await Promise.race([new Promise<void>((done) => (allClosed = done)), timer]);
    for (const link of links) link.client.terminate();
  };
  const innerHandlers = {
    open(socket: Socket<Link>) {
      const link = socket.data;
      link.inner = socket;
      clients.set(socket.localPort, link.address);
      link.client.resume();
    },
    data(socket: Socket<Link>, chunk: Uint8Array) {
      const link = socket.data;
      link.toClient = relay(chunk, link.client, socket);
    },
    drain(socket: Socket<Link>) {
      const link = socket.data;
      if (!link.toInner) return;
      link.toInner = relay(link.toInner, socket, link.client);
      if (!link.toInner) link.client.resume();
    },
    close(socket: Socket<Link>) {
      const link = socket.data;
      clients.delete(socket.localPort);
      link.innerClosed = true;
      // What the inner server sent last (a deploy's `[done]`) still reaches the client before it is closed.
      if (!link.toClient) link.client.end();
    },
    error() {},
  };
  const socket = Bun.listen<Link>({
    hostname: options.hostname,
    port: options.port,
    // A second service on the same port must fail with EADDRINUSE, not share it.
    exclusive: true,
    socket: {
      open(client) {
        const address = client.remoteAddress ?? "";
        const link: Link = { address, client, innerClosed: false, released: false };
        client.data = link;
        if (!guard.admit(address)) {
          link.released = true;
          client.end(TOO_MANY_CONNECTIONS);
          return;
        }
        links.add(link);
        // Nothing is read until the inner connection is there to take it.
        client.pause();
        Bun.connect<Link>({ hostname: "127.0.0.1", port: innerPort, data: link, socket: innerHandlers }).catch(() =>
          client.end(),
        );
      },
      data(client, chunk) {
        const link = client.data;
        if (link.inner) link.toInner = relay(chunk, link.inner, client);
      },
      drain(client) {
        const link = client.data;
        if (!link.toClient) return;
        link.toClient = relay(link.toClient, client, link.inner ?? client);
        if (link.toClient) return;
        if (link.innerClosed) client.end();
        else link.inner?.resume();
      },
      close(client) {
        const link = client.data;
        release(link);
        link.inner?.end();
      },
      error() {},
    },
  });
  return { socket, relayed };
}
