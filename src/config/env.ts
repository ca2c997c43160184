/**
 * The deploy's own variables (docs/security.md "The deploy's environment"): the `env` mapping (literal values,
 * or `{ file }` read at each deploy) and the `envFile` dotenv file. What comes from a file is a secret: the
 * deploy redacts it like the webhook secret. The variables go into the run script's and the health check's
 * environment (steps/env.ts).
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { isInside, readUserFile } from "../system/files.ts";
import { MIN_SECRET_LENGTH } from "../system/redact.ts";
import { isAgeEncrypted } from "./age.ts";

/** A variable of `env`: its value as written, or the file that holds it (read at each deploy; a secret). */
export type EnvValue = string | { file: string };

/** How `envCommand` prints the variables it gives. */
export type EnvCommandFormat = "dotenv" | "json";

/** A variable name a shell can use. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The service's own variables (its settings, the deploy's context, its secrets) are never set from a file. */
const RESERVED = /^SERVICE_/;

/** The largest file read for a variable or as `envFile`: they are read at every deploy. */
export const MAX_ENV_FILE_BYTES = 1024 * 1024;

/** Why `name` cannot be a variable of the deploy, or undefined. */
export function nameProblem(name: string): string | undefined {
  if (!NAME.test(name))
    return `${JSON.stringify(name)} is not a variable name (letters, digits and _, not first a digit)`;
  if (RESERVED.test(name)) return `${name}: names starting with SERVICE_ are the service's own`;
  return undefined;
}

const isMapping = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Checks an `env` value: a mapping of names to a string (a number, a boolean) or `{ file: path }`. */
export function normalizeEnv(value: unknown, where: string, problems: string[]): Record<string, EnvValue> {
  if (!isMapping(value)) {
    problems.push(`${where}: expected a mapping of variable names to values (or to { file: /path })`);
    return {};
  }
  const out: Record<string, EnvValue> = {};
  for (const [name, item] of Object.entries(value)) {
    const bad = nameProblem(name);
    if (bad) {
      problems.push(`${where}: ${bad}`);
      continue;
    }
    if (typeof item === "string" || typeof item === "number" || typeof item === "boolean") {
      // A NUL cannot be passed in an environment; the value itself is never shown (it may be a secret).
      if (String(item).includes("\0")) problems.push(`${where}: the value of ${name} holds a NUL character`);
      else out[name] = String(item);
    } else if (isMapping(item) && Object.keys(item).length === 1 && typeof item.file === "string" && item.file) {
      out[name] = { file: item.file };
    } else {
      problems.push(`${where}: the value of ${name} must be a string or { file: /path }`);
    }
  }
  return out;
}

/**
 * The variables of a dotenv file: `KEY=value` lines, `export KEY=value`, values bare, in double quotes (with
 * `\n`, `\t`, `\"`, `\\` escapes) or in single quotes (literal); blank lines and `# comments` are skipped, and
 * a bare value ends at ` #`. Nothing is expanded (`$HOME` stays `$HOME`). Any other line is an error naming it.
 */
export function parseDotenv(text: string, file: string): { vars: Record<string, string>; problems: string[] } {
  const vars: Record<string, string> = {};
  const problems: string[] = [];
  const lines = text.split("\n");
  for (const [index, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, "").trim();
    if (line === "" || line.startsWith("#")) continue;
    const at = `${file} line ${index + 1}`;
    const match = /^(?:export\s+)?([^=\s]+)\s*=\s*(.*)$/.exec(line);
    if (!match) {
      problems.push(`${at}: expected KEY=value`);
      continue;
    }
    const [, name, rest] = match as unknown as [string, string, string];
    const bad = nameProblem(name);
    const value = bad ? undefined : dotenvValue(rest);
    if (bad) problems.push(`${at}: ${bad}`);
    else if (value === undefined)
      problems.push(`${at}: the value of ${name} is not closed by its quote, or is followed by more than a comment`);
    else vars[name] = value;
  }
  return { vars, problems };
}

const ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", '"': '"', "\\": "\\", $: "$" };

/** A dotenv value after the `=`; undefined when a quote is not closed or more than a comment follows it. */
function dotenvValue(rest: string): string | undefined {
  const quote = rest[0];
  if (quote !== '"' && quote !== "'") return rest.replace(/\s+#.*$/, "").trim();
  let value = "";
  for (let i = 1; i < rest.length; i++) {
    const ch = rest[i]!;
    if (ch === quote) {
      const after = rest.slice(i + 1).trim();
      return after === "" || after.startsWith("#") ? value : undefined;
    }
    if (quote === '"' && ch === "\\" && i + 1 < rest.length) {
      const next = rest[++i]!;
      value += ESCAPES[next] ?? `\\${next}`;
    } else value += ch;
  }
  return undefined;
}

/** What a deploy reads: the variables to add, the values that are secrets, or why the deploy cannot run. */
export interface DeployVariables {
  vars: Record<string, string>;
  /** The values read from files (envFile, `{ file }`): kept out of every output. */
  secrets: string[];
  /** Why the variables could not be read (a missing file, a malformed line): the deploy is refused. */
  problem?: string;
}

export interface EnvSettings {
  env?: Record<string, EnvValue>;
  envFile?: string;
}

/** A file of `env` or `envFile`, resolved against the working directory, with what names it (`name`: env's). */
function envFiles(settings: EnvSettings, cwd: string): { file: string; what: string; name?: string }[] {
  const files: { file: string; what: string; name?: string }[] = settings.envFile
    ? [{ file: resolve(cwd, settings.envFile), what: "envFile" }]
    : [];
  for (const [name, value] of Object.entries(settings.env ?? {}))
    if (typeof value !== "string") files.push({ file: resolve(cwd, value.file), what: `env ${name}`, name });
  return files;
}

/** The variables a file of `env` (`name`) or `envFile` (no name) gives, as a deploy reads them; {} when it cannot. */
function valuesIn(file: string, what: string, name: string | undefined): Record<string, string> {
  const read = readEnvFile(file, what);
  // An age-encrypted envFile's values are known once it is opened (steps/variables.ts), at each deploy.
  if ("problem" in read || (name === undefined && isAgeEncrypted(read.text))) return {};
  return name === undefined ? parseDotenv(read.text, file).vars : { [name]: fileValue(read.text) };
}

/** A `{ file }` value: the file's content, its trailing newline removed. */
const fileValue = (text: string) => text.replace(/\r?\n$/, "");

function readEnvFile(file: string, what: string): { text: string } | { problem: string } {
  try {
    return { text: readUserFile(file, MAX_ENV_FILE_BYTES) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: `cannot read ${file} (${what}): ${code ?? (error as Error).message}` };
  }
}

/**
 * Reads the deploy's variables now (a file changed since the last deploy applies at once): `envFile`'s, then
 * `env`'s over them. Every problem is said, and any problem refuses the deploy: a missing secret must not
 * start a script that would run without it.
 */
export function readDeployVariables(settings: EnvSettings, cwd: string): DeployVariables {
  const vars: Record<string, string> = {};
  const secrets: string[] = [];
  const problems: string[] = [];
  if (settings.envFile) {
    const file = resolve(cwd, settings.envFile);
    const read = readEnvFile(file, "envFile");
    if ("problem" in read) problems.push(read.problem);
    else if (isAgeEncrypted(read.text)) {
      // Opened in memory by steps/variables.ts, which reads it as bytes.
    } else {
      const parsed = parseDotenv(read.text, file);
      problems.push(...parsed.problems);
      Object.assign(vars, parsed.vars);
      secrets.push(...Object.values(parsed.vars));
    }
  }
  for (const [name, value] of Object.entries(settings.env ?? {})) {
    if (typeof value === "string") {
      vars[name] = value;
      continue;
    }
    const file = resolve(cwd, value.file);
    const read = readEnvFile(file, `env ${name}`);
    if ("problem" in read) problems.push(read.problem);
    else {
      vars[name] = fileValue(read.text);
      secrets.push(vars[name]);
    }
  }
  return { vars, secrets, ...(problems.length > 0 ? { problem: problems.join("; ") } : {}) };
}

/**
 * What is unsafe about the files of `env` and `envFile` (said at start and by `service check`): readable by
 * other users, inside the repository (a push can change it, and it may end up committed), or a value too short
 * to be redacted (named, never shown).
 */
export function envFileWarnings(settings: EnvSettings, repoPath: string, cwd: string, app?: string): string[] {
  const warnings: string[] = [];
  const of = app === undefined ? "" : ` of app "${app}"`;
  for (const { file, what, name } of envFiles(settings, cwd)) {
    for (const [variable, value] of Object.entries(valuesIn(file, what, name))) {
      const length = value.trim().length;
      if (length > 0 && length < MIN_SECRET_LENGTH)
        warnings.push(
          `${file} (${what}${of}): the value of ${variable} has ${length} character${length > 1 ? "s" : ""}: a value under ${MIN_SECRET_LENGTH} characters is never redacted from deploy output; if it is no secret, set it in env as a literal`,
        );
    }
    let mode: number;
    try {
      mode = statSync(file).mode & 0o777;
    } catch {
      continue; // a missing file is a problem of its own (check), and refuses the deploys
    }
    if ((mode & 0o044) !== 0)
      warnings.push(
        `${file} (${what}${of}) can be read by other users (mode ${mode.toString(8).padStart(4, "0")}): run chmod 600 ${file}`,
      );
    if (isInside(file, repoPath))
      warnings.push(
        `${file} (${what}${of}) is inside the repository ${repoPath}: a push can change it and it may be committed; keep it outside`,
      );
  }
  return warnings;
}

/** The names `service check` shows of the deploy's variables (never their values), with the files they come from. */
export function describeEnv(settings: EnvSettings, cwd: string): string | undefined {
  const names = Object.entries(settings.env ?? {}).map(([name, value]) =>
    typeof value === "string" ? name : `${name} (from ${resolve(cwd, value.file)})`,
  );
  if (settings.envFile) {
    const file = resolve(cwd, settings.envFile);
    const read = readEnvFile(file, "envFile");
    if ("text" in read && isAgeEncrypted(read.text)) names.unshift(`(age-encrypted, from ${file})`);
    else {
      const fromFile = "text" in read ? Object.keys(parseDotenv(read.text, file).vars) : [];
      names.unshift(`${fromFile.length > 0 ? `${fromFile.join(", ")} ` : ""}(from ${file})`);
    }
  }
  return names.length > 0 ? names.join(", ") : undefined;
}
