#!/usr/bin/env bun
import { defineCommand, runMain } from "citty";
import { consola, LogLevels } from "consola";
import pkg from "../package.json" with { type: "json" };
import { checkCommand } from "./commands/check.ts";
import { deployCommand } from "./commands/deploy.ts";
import { logsCommand } from "./commands/logs.ts";
import { serveCommand } from "./commands/serve.ts";
import { systemdCommand } from "./commands/systemd.ts";

export const main = defineCommand({
  meta: { name: "service", version: pkg.version, description: pkg.description },
  subCommands: { serve: serveCommand, deploy: deployCommand, logs: logsCommand, check: checkCommand, systemd: systemdCommand },
  default: "serve",
});

if (import.meta.main) {
  // consola hides info under NODE_ENV=test or CI-like settings; the CLI's messages are its interface.
  consola.level = LogLevels.info;
  await runMain(main);
}
