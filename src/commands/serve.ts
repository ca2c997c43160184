import { loadConfig } from "../config/load.ts";
import { openWebhookPort } from "../http/listen.ts";
import { defaultLogger } from "../system/logger.ts";
import { isTerminal } from "../system/terminal.ts";
import { defineCommand } from "./_define.ts";
import { survivesClosedOutput } from "./_guard.ts";

export const serveCommand = defineCommand({
  meta: {
    name: "serve",
    description:
      "Start the webhook server (what runs when no command is given). Configured by service.yaml (or SERVICE_CONFIG) " +
      "and SERVICE_* variables: `service check` shows every value in force and where it came from; " +
      "docs/configuration.md lists every key and its variable.",
  },
  args: {
    strict: {
      type: "boolean",
      description:
        "Refuse to start when the config file cannot be read or is invalid (unknown keys included), instead of " +
        "falling back to the environment and defaults; a later bad edit keeps the last good configuration (also SERVICE_STRICT_CONFIG=1)",
    },
  },
  async run({ args }) {
    // The server outlives the terminal or pipe it prints to: its deploys are not its output's business. Its lines
    // are each one write to the descriptor (writeOut), which drops what a closed output refuses; process.stdout,
    // which needs the guard, is used only on a terminal (consola's badges, the HTTPS question).
    if ((await isTerminal(1)) || (await isTerminal(2))) survivesClosedOutput();
    // A wrong-typed value stops the start here; other problems are said below, as `service check` says them.
    const config = loadConfig({
      logger: { info() {}, warn() {}, error() {} },
      strict: args.strict || undefined,
    });
    // The port opens before the server's own modules load (most of a start's time): a request that comes meanwhile
    // waits for the server, which answers it once the kept requests are recovered (http/listen.ts).
    const webhookPort = await openWebhookPort(config, defaultLogger()).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE")
        throw new Error(`port ${config.port} is already in use: choose another with SERVICE_PORT or the port key`);
      throw error;
    });
    try {
      const { serveOn } = await import("./_serving.ts");
      await serveOn(config, webhookPort);
    } catch (error) {
      await webhookPort.listener.stop();
      throw error;
    }
  },
});
