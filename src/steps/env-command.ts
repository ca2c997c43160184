/**
 * `envCommand` (docs/security.md "Secrets"): a command of the service's own config that prints the deploy's
 * secrets (`age -d …`, `sops -d …`, `op inject …`, `vault kv get -format=json …`). Run at each deploy before
 * anything live moves; its output is read in memory, at most MAX_ENV_COMMAND_BYTES, and never written anywhere.
 */
import { nameProblem, parseDotenv } from "../config/env.ts";
import type { EnvCommandFormat } from "../config/env.ts";
import { currentOwner, RunningProcesses, runProcess } from "../system/process.ts";
import { Redaction } from "../system/redact.ts";
import { planLine } from "./script.ts";

/** The most the command may print on its standard output. */
export const MAX_ENV_COMMAND_BYTES = 1024 * 1024;
/** How long it may take unless `envCommandTimeoutMs` says. */
export const DEFAULT_ENV_COMMAND_TIMEOUT_MS = 30_000;
/** The end of its standard error kept for the problem it makes. */
const STDERR_KEPT = 2048;

export interface EnvCommandSettings {
  envCommand?: string;
  envCommandFormat?: EnvCommandFormat;
  envCommandTimeoutMs?: number;
}

/** The service's environment without its own variables (`SERVICE_*`: its settings and secrets). */
export function commandEnv(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("SERVICE_")));
}

/**
 * Runs the command in `dir` and reads the variables it prints, or says why it cannot be used (it could not start,
 * exited non-zero, timed out, printed too much, or printed what does not parse). No value is ever in the
 * problem: what it printed on its standard output is redacted from the standard error quoted there.
 */
export async function runEnvCommand(
  settings: EnvCommandSettings,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<{ vars: Record<string, string> } | { problem: string }> {
  const command = settings.envCommand ?? "";
  const timeoutMs = settings.envCommandTimeoutMs ?? DEFAULT_ENV_COMMAND_TIMEOUT_MS;
  const stdout: Uint8Array[] = [];
  let size = 0;
  let stderr = Buffer.alloc(0);
  let overflow = false;
  // Its own owner, within the deployer's (a stop or Ctrl-C reaches it): stopped at once when it prints past the cap.
  const processes = new RunningProcesses(currentOwner());
  const exit = await processes.own(() =>
    runProcess(planLine(command).argv, {
      cwd: dir,
      env: commandEnv(env),
      deadline: Date.now() + timeoutMs,
      onOutput: (stream, data) => {
        if (stream === "stderr") {
          stderr = Buffer.concat([stderr, data]);
          if (stderr.length > STDERR_KEPT) stderr = stderr.subarray(stderr.length - STDERR_KEPT);
        } else if (!overflow) {
          size += data.length;
          if (size > MAX_ENV_COMMAND_BYTES) {
            overflow = true;
            stdout.length = 0;
            processes.signal("SIGKILL");
          } else stdout.push(new Uint8Array(data));
        }
      },
    }),
  );
  const printed = Buffer.concat(stdout).toString("utf8");
  const said = () => {
    const text = new Redaction(printedValues(printed)).text(stderr.toString("utf8")).trim();
    return text ? `: ${text.split("\n").slice(-5).join(" / ")}` : "";
  };
  const failed = (why: string) => ({ problem: `envCommand ${why}` });
  if (overflow)
    return failed(`printed more than ${MAX_ENV_COMMAND_BYTES} bytes (the most its output may be) and was stopped`);
  if (exit.error) return failed(exit.error);
  if (exit.timedOut) return failed(`timed out after ${timeoutMs} ms (envCommandTimeoutMs)${said()}`);
  if (exit.exitCode !== 0) return failed(`exited with code ${exit.exitCode}${said()}`);
  const parsed = settings.envCommandFormat === "json" ? parseJsonVars(printed) : dotenvVars(printed);
  return "problem" in parsed ? failed(`printed what is not ${parsed.problem}`) : parsed;
}

/** Dotenv output: its problems name lines and variables, never a value. */
function dotenvVars(text: string): { vars: Record<string, string> } | { problem: string } {
  const parsed = parseDotenv(text, "its output");
  if (parsed.problems.length > 0) return { problem: `dotenv (${parsed.problems.join("; ")})` };
  return { vars: parsed.vars };
}

/**
 * JSON output: an object whose values are strings (numbers and booleans taken as written, like `env`'s). A parse
 * error is not quoted: the engine's message may hold a piece of the text.
 */
export function parseJsonVars(text: string): { vars: Record<string, string> } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: "JSON (it does not parse)" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return { problem: "a JSON object of strings (it is not an object)" };
  const vars: Record<string, string> = {};
  const problems: string[] = [];
  for (const [name, item] of Object.entries(value)) {
    const bad = nameProblem(name);
    if (bad) problems.push(bad);
    else if (typeof item === "string" || typeof item === "number" || typeof item === "boolean") {
      if (String(item).includes("\0")) problems.push(`the value of ${name} holds a NUL character`);
      else vars[name] = String(item);
    } else problems.push(`the value of ${name} is not a string`);
  }
  return problems.length > 0 ? { problem: `a JSON object of strings (${problems.join("; ")})` } : { vars };
}

/**
 * Everything the command printed that may be a value, to keep out of its quoted standard error: each line, and
 * each value as the formats would read it, parsed or not.
 */
function printedValues(text: string): string[] {
  const values = text.split("\n");
  for (const line of values.slice()) {
    const at = line.indexOf("=");
    if (at > 0)
      values.push(
        line
          .slice(at + 1)
          .trim()
          .replace(/^["']|["']$/g, ""),
      );
    for (const quoted of line.matchAll(/"((?:[^"\\]|\\.)*)"/g)) values.push(quoted[1]!);
  }
  try {
    const json = JSON.parse(text) as unknown;
    if (json && typeof json === "object") values.push(...Object.values(json).map((v) => String(v)));
  } catch {}
  return values;
}
