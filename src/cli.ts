#!/usr/bin/env bun
import { defineCommand, runCommand, runMain } from "citty";
import { consola, LogLevels } from "consola";
import pkg from "../package.json" with { type: "json" };
import { commandLine, rejectUnknownArgs } from "./commands/_args.ts";
import { cancelCommand } from "./commands/cancel.ts";
import { checkCommand } from "./commands/check.ts";
import { deployCommand } from "./commands/deploy.ts";
import { logsCommand } from "./commands/logs.ts";
import { rollbackCommand } from "./commands/rollback.ts";
import { pauseCommand, resumeCommand } from "./commands/pause.ts";
import { plainOutput, showUsage, useOutputStyle } from "./commands/_output.ts";
import { adminTokenCommand, secretCommand } from "./commands/secret.ts";
import { serveCommand } from "./commands/serve.ts";
import { statusCommand } from "./commands/status.ts";
import { systemdCommand } from "./commands/systemd.ts";

const subCommands = {
  serve: serveCommand,
  deploy: deployCommand,
  logs: logsCommand,
  check: checkCommand,
  systemd: systemdCommand,
  rollback: rollbackCommand,
  status: statusCommand,
  pause: pauseCommand,
  resume: resumeCommand,
  cancel: cancelCommand,
  secret: secretCommand,
  "admin-token": adminTokenCommand,
};

export const main = defineCommand({
  meta: { name: "service", version: pkg.version, description: pkg.description },
  subCommands,
  default: "serve",
});

/** Whether citty answers `rawArgs` itself, with the usage or the version, before any command runs. */
const asksForUsage = (rawArgs: string[]) =>
  rawArgs.some((arg) => arg === "--help" || arg === "-h") ||
  (rawArgs.length === 1 && ["--version", "-v"].includes(rawArgs[0]!));

/**
 * Runs the command line. The one place a failure reaches the user: one line and exit code 1, never a stack
 * trace (citty's runMain would print one). The exit code is set, not forced: a command that must end its
 * process exits itself.
 */
async function runCli(rawArgs: string[], plain: boolean): Promise<void> {
  try {
    const line = commandLine(rawArgs, subCommands, main.default as string);
    if (asksForUsage(rawArgs))
      return await runMain(main, { rawArgs, showUsage: (cmd, parent) => showUsage(cmd, parent, plain) });
    rejectUnknownArgs(line);
    await runCommand(main, { rawArgs });
  } catch (error) {
    consola.error((error as Error).message ?? String(error));
    process.exitCode = 1;
  }
}

if (import.meta.main) {
  // consola hides info under NODE_ENV=test or CI-like settings; the CLI's messages are its interface.
  consola.level = LogLevels.info;
  const plain = plainOutput();
  useOutputStyle(plain);
  await runCli(process.argv.slice(2), plain);
}
