/**
 * Library servers (`createServiceServer`) in a test: started, and stopped when the block ends with
 * `await using server = await startLibraryServer(…)`.
 */
import {
  createServiceServer,
  type ResolvedConfig,
  type ServiceServer,
  type ServiceServerOptions,
  type StopOptions,
  type UserConfig,
} from "../../src/index.ts";

export type LibraryServer = ServiceServer & AsyncDisposable;

/** Creates and starts a library server; when the block ends it is stopped with `stop` (a forced stop if asked). */
export async function startLibraryServer(
  config: UserConfig | ResolvedConfig,
  options: ServiceServerOptions = {},
  stop: StopOptions = {},
): Promise<LibraryServer> {
  const server = createServiceServer(config, options);
  await server.start();
  return Object.assign(server, { [Symbol.asyncDispose]: () => server.stop(stop) });
}
