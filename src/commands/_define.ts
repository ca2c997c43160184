import type { ArgsDef, CommandDef } from "citty";

/**
 * citty's defineCommand (which returns its argument), without loading citty: a bare `service` starts the server
 * without it (cli.ts), so neither citty nor the `node:util` it imports are part of the server's idle memory.
 */
export function defineCommand<T extends ArgsDef = ArgsDef>(def: CommandDef<T>): CommandDef<T> {
  return def;
}
