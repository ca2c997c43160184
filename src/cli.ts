#!/usr/bin/env bun
import pkg from "../package.json" with { type: "json" };
import { commandLine, rejectUnknownArgs } from "./commands/_args.ts";
import { defineCommand } from "./commands/_define.ts";
import { plainOutput, showUsage, useOutputStyle } from "./commands/_output.ts";
import { serviceConsole, setConsoleLevel } from "./system/logger.ts";
import { shownLines } from "./system/shown.ts";

/** Each command is loaded when it runs: `service` (serve) holds none of the others' code. */
const subCommands = {
  serve: () => import("./commands/serve.ts").then((m) => m.serveCommand),
  deploy: () => import("./commands/deploy.ts").then((m) => m.deployCommand),
  logs: () => import("./commands/logs.ts").then((m) => m.logsCommand),
  check: () => import("./commands/check.ts").then((m) => m.checkCommand),
  systemd: () => import("./commands/systemd.ts").then((m) => m.systemdCommand),
  rollback: () => import("./commands/rollback.ts").then((m) => m.rollbackCommand),
  status: () => import("./commands/status.ts").then((m) => m.statusCommand),
  stats: () => import("./commands/stats.ts").then((m) => m.statsCommand),
  pause: () => import("./commands/pause.ts").then((m) => m.pauseCommand),
  resume: () => import("./commands/pause.ts").then((m) => m.resumeCommand),
  "catch-up": () => import("./commands/catch-up.ts").then((m) => m.catchUpCommand),
  cancel: () => import("./commands/cancel.ts").then((m) => m.cancelCommand),
  notify: () => import("./commands/notify.ts").then((m) => m.notifyCommand),
  secret: () => import("./commands/secret.ts").then((m) => m.secretCommand),
  audit: () => import("./commands/audit.ts").then((m) => m.auditCommand),
  "admin-token": () => import("./commands/secret.ts").then((m) => m.adminTokenCommand),
  token: () => import("./commands/token.ts").then((m) => m.tokenCommand),
  init: () => import("./commands/init.ts").then((m) => m.initCommand),
  previews: () => import("./commands/previews.ts").then((m) => m.previewsCommand),
  preview: () => import("./commands/previews.ts").then((m) => m.previewCommand),
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
    // A bare `service` (how a server is run): the server, without citty, which has nothing to parse here.
    if (rawArgs.length === 0) {
      const serve = await subCommands.serve();
      await serve.run!({ rawArgs, args: { _: [] }, cmd: serve } as never);
      return;
    }
    const line = await commandLine(rawArgs, subCommands, main.default as string);
    const { runCommand, runMain } = await import("citty");
    if (asksForUsage(rawArgs))
      return await runMain(main, { rawArgs, showUsage: (cmd, parent) => showUsage(cmd, parent, plain) });
    rejectUnknownArgs(line);
    await runCommand(main, { rawArgs });
  } catch (error) {
    // A message may quote what came from outside (a ref, a deploy id): the terminal shows it, never obeys it.
    serviceConsole.error(shownLines((error as Error).message ?? String(error)));
    process.exitCode = 1;
  }
}

if (import.meta.main) {
  // The CLI's messages are its interface: a CONSOLA_LEVEL in the environment does not hide them.
  setConsoleLevel(3);
  const plain = await plainOutput();
  await useOutputStyle(plain);
  await runCli(process.argv.slice(2), plain);
}
