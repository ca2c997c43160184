import type { ArgsDef, CommandDef } from "citty";

type Command = Pick<CommandDef<ArgsDef>, "args" | "meta">;

/** The command line a command is given: the command, and the arguments after its name. */
export interface CommandLine {
  cmd: Command;
  rawArgs: string[];
}

/**
 * The command `rawArgs` names and its arguments, as citty picks them: the first word names a command (the main
 * command takes no options), none names the default one, and nothing after `--` is a name. Throws for a word
 * that is not a command: citty would answer with the whole usage; a wrong word deserves the one line a wrong
 * option gets.
 */
export async function commandLine(
  rawArgs: string[],
  commands: Record<string, () => Promise<Command>>,
  fallback: string,
): Promise<CommandLine> {
  const index = rawArgs.findIndex((arg) => arg === "--" || !arg.startsWith("-"));
  const name = index < 0 ? "--" : rawArgs[index]!;
  if (name === "--") return { cmd: await commands[fallback]!(), rawArgs };
  if (!Object.hasOwn(commands, name)) {
    throw new Error(`unknown command "${name}" (commands: ${Object.keys(commands).join(", ")}; see service --help)`);
  }
  return { cmd: await commands[name]!(), rawArgs: rawArgs.slice(index + 1) };
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * Throws for an option or argument the command does not define: citty would ignore it, and a mistyped
 * `--prot 8080` would then start a server on the default port.
 */
export function rejectUnknownArgs({ rawArgs, cmd }: CommandLine): void {
  const defined = (cmd.args ?? {}) as ArgsDef;
  const name = (cmd.meta as { name?: string } | undefined)?.name ?? "";
  const help = `see service ${name} --help`.replace("  ", " ");
  const flags = new Map<string, string>([
    ["help", "boolean"],
    ["h", "boolean"],
    ["version", "boolean"],
    ["v", "boolean"],
  ]);
  let positionals = 0;
  for (const [key, arg] of Object.entries(defined)) {
    if (arg.type === "positional") {
      positionals++;
      continue;
    }
    const type = arg.type ?? "string";
    const alias = (arg as { alias?: string | string[] }).alias;
    const aliases = alias === undefined ? [] : Array.isArray(alias) ? alias : [alias];
    for (const flag of [key, kebab(key), ...aliases]) flags.set(flag, type);
    if (type === "boolean") for (const flag of [key, kebab(key)]) flags.set(`no-${flag}`, type);
  }
  const given: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!;
    if (token === "--") {
      given.push(...rawArgs.slice(i + 1));
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      given.push(token);
      continue;
    }
    const [flag = "", value] = token.replace(/^--?/, "").split(/=(.*)/s);
    // `-f` is one short flag; `--follow` one long one.
    for (const one of token.startsWith("--") ? [flag] : flag.split("")) {
      const type = flags.get(one);
      if (!type) throw new Error(`unknown option ${token.startsWith("--") ? "--" : "-"}${one} (${help})`);
      if (type !== "string") continue;
      // A string option without `=value` takes the next argument as its value; an empty one is a mistake.
      const shown = `${token.startsWith("--") ? "--" : "-"}${one}`;
      if (value === undefined && ++i >= rawArgs.length) throw new Error(`option ${shown} needs a value (${help})`);
      if ((value ?? rawArgs[i]) === "") throw new Error(`option ${shown} needs a value (${help})`);
    }
  }
  if (given.length > positionals) throw new Error(`unexpected argument "${given[positionals]}" (${help})`);
}
