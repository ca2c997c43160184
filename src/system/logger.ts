import { consola, type ConsolaInstance } from "consola";

/** Where the library's own messages go: the server's `logger` option, or the CLI's. */
export type Logger = Pick<ConsolaInstance, "info" | "warn" | "error">;

/** The logger of a caller that named none: the service's tagged console. */
export function defaultLogger(): ConsolaInstance {
  return consola.withTag("service");
}
