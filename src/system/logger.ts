import { type ConsolaInstance, consola as basic } from "consola/basic";

/** Where the library's own messages go: the server's `logger` option, or the CLI's. */
export type Logger = Pick<ConsolaInstance, "info" | "warn" | "error">;

/**
 * The service's console, the CLI's and the library's default: one `[level] text` line per message, as a journal,
 * a pipe or a file wants them. On a terminal the CLI gives it consola's own reporter (badges, colours; see
 * useTerminalStyle): that reporter and what it needs (node:util, node:tty, string widths) are loaded only then.
 */
export const consola: ConsolaInstance = basic;

/** The console's messages as consola shows them on a terminal, from now on. */
export async function useTerminalStyle(): Promise<void> {
  const { consola: fancy } = await import("consola");
  consola.setReporters(fancy.options.reporters);
}

/** The logger of a caller that named none: the service's tagged console. */
export function defaultLogger(): ConsolaInstance {
  return consola.withTag("service");
}
