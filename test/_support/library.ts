/** The library's server (`createServiceServer`) in the test process, stopped when the block that started it ends. */
import type { ResolvedConfig } from "../../src/config/schema-resolved.ts";
import type { UserConfig } from "../../src/config/schema.ts";
import {
  createServiceServer,
  type ServiceServer,
  type ServiceServerOptions,
  type StopOptions,
} from "../../src/index.ts";

/** A library server (`createServiceServer`), started, and stopped when the block ends. */
export type LibraryServer = ServiceServer & AsyncDisposable;

/**
 * Creates and starts a library server: `await using server = await startLibraryServer(config, options)`. When the
 * block ends it is stopped (`stop(stopOptions)`: with `{ force: true }` its running deploys are killed) and its
 * deploys are waited for. Stopping it in the test first is harmless: a second stop does nothing.
 */
export async function startLibraryServer(
  config: UserConfig | ResolvedConfig,
  options: ServiceServerOptions = {},
  stopOptions: StopOptions = {},
): Promise<LibraryServer> {
  const server = createServiceServer(config, options);
  await server.start();
  return Object.assign(server, {
    async [Symbol.asyncDispose]() {
      await server.stop(stopOptions);
      await server.idle();
    },
  });
}
