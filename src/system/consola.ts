import { type ConsolaInstance, consola as basic, LogLevels } from "consola/basic";
import { writeThrough } from "./logger.ts";

/**
 * consola, for the CLI's commands other than `serve` (their questions, their messages): one `[level] text` line
 * per message off a terminal, as the service's console writes them. Its messages are the CLI's interface: a
 * CONSOLA_LEVEL in the environment does not hide them.
 */
export const consola: ConsolaInstance = basic;
consola.level = LogLevels.info;

/**
 * The console's messages, consola's and the service's, as consola shows them on a terminal (badges, colours),
 * from now on: that reporter and what it needs (node:util, node:tty, string widths) are loaded only then.
 */
export async function useTerminalStyle(): Promise<void> {
  const { consola: fancy } = await import("consola");
  consola.setReporters(fancy.options.reporters);
  writeThrough(consola);
}
