import type { ArgsDef, CommandDef } from "citty";
import { isTerminal } from "../system/terminal.ts";

/**
 * Plain text: no colours and no decoration. For output that is not read on a terminal (a pipe, a file, a
 * journal) or when the user said so with NO_COLOR (any non-empty value, as no-color.org asks). citty decides
 * colour on NO_COLOR=1 and CI only, and consola badges a message with blank lines around it off a terminal.
 */
export async function plainOutput(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  return Boolean(env.NO_COLOR) || !(await isTerminal(1));
}

/** Messages are one `[level] text` line each when the output is plain, consola's badges and colours otherwise. */
export async function useOutputStyle(plain: boolean): Promise<void> {
  if (!plain) await (await import("../system/consola.ts")).useTerminalStyle();
}

/** citty's usage, without its column padding at line ends nor blank lines at the end, and without colours when plain. */
export async function showUsage<T extends ArgsDef>(
  cmd: CommandDef<T>,
  parent: CommandDef<T> | undefined,
  plain: boolean,
): Promise<void> {
  const [{ renderUsage }, { stripVTControlCharacters }] = await Promise.all([import("citty"), import("node:util")]);
  const text = await renderUsage(cmd, parent);
  const lines = (plain ? stripVTControlCharacters(text) : text).split("\n").map((line) => line.trimEnd());
  process.stdout.write(`${lines.join("\n").trimEnd()}\n`);
}
