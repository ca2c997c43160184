import type { Serve, ServeOptions } from "./types.ts";

/** The Bun side of the runtime seam: Bun.serve. */
export const serve: Serve = (options: ServeOptions) => {
  const server = Bun.serve({
    port: options.port,
    hostname: options.hostname,
    idleTimeout: options.idleTimeoutSeconds,
    maxRequestBodySize: options.maxRequestBodySize,
    development: false,
    fetch: (request, bunServer) => options.fetch(request, { noTimeout: () => bunServer.timeout(request, 0) }),
    error(error) {
      return options.error(error);
    },
  });
  return {
    port: server.port ?? options.port,
    stop: async () => {
      await server.stop();
    },
  };
};
