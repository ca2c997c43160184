import type { Child, Runtime } from "./types.ts";

/** The Bun side of the runtime seam. */
export const runtime: Runtime = {
  async serve(options) {
    const server = Bun.serve({
      port: options.port,
      hostname: options.hostname,
      idleTimeout: options.idleTimeoutSeconds,
      maxRequestBodySize: options.maxRequestBodySize,
      development: false,
      // `development: false` alone turns SO_REUSEPORT on: a second service on the same port would then start
      // and silently take half the connections instead of failing with EADDRINUSE.
      reusePort: false,
      fetch: (request, bunServer) =>
        options.fetch(request, {
          noTimeout: () => bunServer.timeout(request, 0),
          remoteAddress: () => bunServer.requestIP(request)?.address ?? "",
        }),
      error: (error) => options.error(error),
    });
    return {
      port: server.port ?? options.port,
      stop: async () => {
        await server.stop();
      },
    };
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
