/** A library server that polls: the polling tests' fixture. */
import { createConsola } from "consola";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import type { UserConfig } from "../../src/config/schema.ts";
import { SECRET, type Repo } from "./helpers.ts";
import { startLibraryServer } from "./library.ts";

/**
 * `await using server = await pollingServer(…)`: a library server polling `repo` every `everyMs` (the internal
 * option: the key's minimum is 5000), and what it logs (`server.said`); stopped when the block ends.
 */
export async function pollingServer(repo: Repo, everyMs: number, extra: UserConfig = {}) {
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
  const server = await startLibraryServer(config, {
    cwd: repo.clone,
    logger: logger.withTag("service"),
    pollEveryMs: everyMs,
  });
  return Object.assign(server, { said });
}
