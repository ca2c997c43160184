import type { ArgsDef, CommandDef } from "citty";
import { consola } from "consola";
import { readFileSync } from "node:fs";

/** What `guard` needs of citty's command context: the arguments as given, and the command they are for. */
export interface CommandCall {
  rawArgs: string[];
  cmd: Pick<CommandDef<any>, "args" | "meta">;
}

/**
 * Runs a command body so that a failure reaches the user as one clear message and exit code 1, never as a
 * stack trace. An option or argument the command does not define is such a failure: citty would ignore it, and
 * a mistyped `--prot 8080` would then start a server on the default port.
 */
export async function guard(call: CommandCall, body: () => Promise<void>): Promise<void> {
  try {
    rejectUnknownArgs(call);
    await body();
  } catch (error) {
    consola.error((error as Error).message ?? String(error));
    process.exit(1);
  }
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function rejectUnknownArgs({ rawArgs, cmd }: CommandCall): void {
  const defined = (cmd.args ?? {}) as ArgsDef;
  const name = (cmd.meta as { name?: string } | undefined)?.name ?? "";
  const help = `see service ${name} --help`.replace("  ", " ");
  const flags = new Map<string, string>([["help", "boolean"], ["h", "boolean"], ["version", "boolean"], ["v", "boolean"]]);
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

/**
 * Keeps the process alive when its output goes away: a closed terminal (an SSH session that ended) or a pipe
 * whose reader exited (`service | tee`, `service deploy | head`). Writes then fail (EIO, EPIPE) and are
 * dropped; without this, the first failed write would end the process in the middle of a deploy.
 * Returns whether standard output is still open.
 */
export function survivesClosedOutput(): () => boolean {
  let stdoutOpen = true;
  process.stdout.on("error", () => {
    stdoutOpen = false;
  });
  process.stderr.on("error", () => {});
  return () => stdoutOpen;
}

/**
 * Whether this process started with SIGHUP ignored, as `nohup service &` starts it (Linux: the SigIgn mask of
 * /proc/self/status). A handler would undo that, and the logout nohup is for would stop the service.
 */
function hangupIgnored(): boolean {
  try {
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & 1n) === 1n;
  } catch {
    return false;
  }
}

/** The signals that stop a command: Ctrl-C, `kill`, systemd, and SIGHUP when its terminal closes (unless nohup). */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = hangupIgnored() ? ["SIGINT", "SIGTERM"] : ["SIGINT", "SIGTERM", "SIGHUP"];
