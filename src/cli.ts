#!/usr/bin/env bun
import { defineCommand, runMain } from "citty";
import { consola, LogLevels } from "consola";
import pkg from "../package.json" with { type: "json" };
import { checkCommand } from "./commands/check.ts";
import { deployCommand } from "./commands/deploy.ts";
import { logsCommand } from "./commands/logs.ts";
import { plainOutput, showUsage, useOutputStyle } from "./commands/_output.ts";
import { serveCommand } from "./commands/serve.ts";
import { systemdCommand } from "./commands/systemd.ts";

const subCommands = { serve: serveCommand, deploy: deployCommand, logs: logsCommand, check: checkCommand, systemd: systemdCommand };

export const main = defineCommand({
  meta: { name: "service", version: pkg.version, description: pkg.description },
  subCommands,
  default: "serve",
});

/**
 * The command named in `rawArgs` when it is not one of ours. citty would answer with the whole usage; a wrong
 * word deserves the one line a wrong option gets. The main command takes no options, so the first word is it.
 */
function unknownCommand(rawArgs: string[]): string | undefined {
  const name = rawArgs.find((arg) => arg === "--" || !arg.startsWith("-"));
  if (name === undefined || name === "--" || Object.hasOwn(subCommands, name)) return undefined;
  return `unknown command "${name}" (commands: ${Object.keys(subCommands).join(", ")}; see service --help)`;
}

if (import.meta.main) {
  // consola hides info under NODE_ENV=test or CI-like settings; the CLI's messages are its interface.
  consola.level = LogLevels.info;
  const plain = plainOutput();
  useOutputStyle(plain);
  const unknown = unknownCommand(process.argv.slice(2));
  if (unknown) {
    consola.error(unknown);
    process.exit(1);
  }
  await runMain(main, { showUsage: (cmd, parent) => showUsage(cmd, parent, plain) });
}
