/** A library server that polls: the polling tests' fixture. */
import { createConsola } from "consola";
import { createServiceServer, type ServiceServer } from "../../src/server.ts";
import { defaultConfig, type UserConfig } from "../../src/config/schema.ts";
import { SECRET, type Repo } from "./helpers.ts";

/**
 * A server polling `repo` every `everyMs` (the internal option: the key's minimum is 5000), and what it logs;
 * `await using` stops it when the block ends.
 */
export async function pollingServer(
  repo: Repo,
  everyMs: number,
  extra: UserConfig = {},
): Promise<{ server: ServiceServer; said: string[] } & AsyncDisposable> {
  const said: string[] = [];
  const logger = createConsola({
    level: 5,
    reporters: [{ log: (entry) => said.push(`[${entry.type}] ${entry.args.map(String).join(" ")}`) }],
  });
  const config = {
    ...defaultConfig(repo.clone),
    port: 0,
    hostname: "127.0.0.1",
    secret: SECRET,
    runScript: "echo deployed",
    pollIntervalMs: 5000,
    ...extra,
  };
  const server = createServiceServer(config, {
    cwd: repo.clone,
    logger: logger.withTag("service"),
    pollEveryMs: everyMs,
  });
  await server.start();
  return { server, said, [Symbol.asyncDispose]: () => server.stop() };
}
