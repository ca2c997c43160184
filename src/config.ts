import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { consola, type ConsolaInstance } from "consola";
import { parse as parseYaml } from "yaml";
import { ConfigError, defaultConfig, envConfig, envFlag, normalizeUserConfig, type ResolvedConfig, type UserConfig } from "./config-schema.ts";

/** Config file names looked up in the working directory, first existing wins. */
export const CONFIG_FILE_NAMES = ["service.yaml", "service.yml", ".service.yaml", ".service.yml"] as const;

/** The config file that applies: `SERVICE_CONFIG`, else the first of CONFIG_FILE_NAMES in `cwd`. */
export function findConfigFile(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.SERVICE_CONFIG) return resolve(cwd, env.SERVICE_CONFIG);
  for (const name of CONFIG_FILE_NAMES) {
    const candidate = resolve(cwd, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The variable that turns strict config mode on (also `service --strict`). */
export const STRICT_ENV = "SERVICE_STRICT_CONFIG";

/** Whether the environment asks for strict config mode; a value that is not yes/no throws a ConfigError. */
export function strictFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return envFlag(env, STRICT_ENV);
}

/** Strict mode's suffix to a problem with the config file, so the message says why it is not only a warning. */
export const STRICT_REFUSES = `strict mode (${STRICT_ENV}=1 or --strict) does not start without a valid config file`;

export interface ConfigFileResult {
  file: string;
  /** Present when the file was read and is valid. */
  config?: UserConfig;
  /** Why the file cannot be used (unreadable or not YAML); callers fall back without it. */
  invalid?: string;
  warnings: string[];
}

/** The text of a config file, or why it cannot be read (`missing` when it does not exist). */
export type ConfigText = { text: string } | { invalid: string; missing: boolean };

/** The largest config file read: it is read again whenever it changes, on a request path before authentication. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

export function readConfigText(file: string): ConfigText {
  let fd: number | undefined;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    // A device (/dev/zero) or a FIFO has no end, or none to wait for; a directory has no text.
    if (!stat.isFile()) return { invalid: `cannot read ${file}: not a regular file${stat.isDirectory() ? " (a directory)" : ""}`, missing: false };
    const tooBig = (size: number) => ({ invalid: `${file} is ${size} bytes; a config file may be at most 1 MiB (${MAX_CONFIG_BYTES} bytes)`, missing: false });
    if (stat.size > MAX_CONFIG_BYTES) return tooBig(stat.size);
    const buffer = Buffer.allocUnsafe(MAX_CONFIG_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    // It grew while being read.
    if (length > MAX_CONFIG_BYTES) return tooBig(length);
    return { text: buffer.toString("utf8", 0, length) };
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
    return { invalid: `cannot read ${file}: ${(error as Error).message}`, missing };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The `yaml` package ends its first message line with ":" before a code excerpt; the excerpt is not kept. */
function yamlError(error: unknown): string {
  return ((error as Error).message.split("\n")[0] ?? "").replace(/:\s*$/, "");
}

function parseConfigText(file: string, text: string, errors?: string[]): ConfigFileResult {
  const warnings: string[] = [];
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    return { file, warnings, invalid: `${file} is not valid YAML: ${yamlError(error)}` };
  }
  if (raw !== null && raw !== undefined && (typeof raw !== "object" || Array.isArray(raw))) {
    return { file, warnings, invalid: `${file}: the top level must be a mapping of keys to values` };
  }
  return { file, warnings, config: normalizeUserConfig(raw, file, warnings, errors) };
}

export function parseConfigRead(file: string, read: ConfigText): ConfigFileResult {
  return "text" in read ? parseConfigText(file, read.text) : { file, warnings: [], invalid: read.invalid };
}

/**
 * Reads one config file. An unreadable or unparsable file is reported in `invalid` (the spec falls back to
 * env + defaults); a readable file with a wrong-typed value throws a ConfigError naming the key.
 */
export function readConfigFile(file: string, errors?: string[]): ConfigFileResult {
  const read = readConfigText(file);
  return "text" in read ? parseConfigText(file, read.text, errors) : { file, warnings: [], invalid: read.invalid };
}

export interface LoadConfigOptions {
  /** Directory to look up the config file in and resolve relative paths against. @default process.cwd() */
  cwd?: string;
  /** Environment to read `SERVICE_*` from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Values under the config file, over the defaults (the server's base config). */
  base?: UserConfig;
  /** Where warnings (an invalid file, unknown keys) go. @default consola.withTag("service") */
  logger?: ConsolaInstance;
  /**
   * Strict mode: an unreadable or invalid config file (unknown keys included, or a SERVICE_CONFIG file that is
   * missing) throws a ConfigError instead of falling back to environment and defaults.
   * @default SERVICE_STRICT_CONFIG
   */
  strict?: boolean;
}

/** defaults ← base ← file ← env, with repoPath made absolute. */
export function mergeConfig(cwd: string, ...layers: (UserConfig | undefined)[]): ResolvedConfig {
  const merged: Record<string, unknown> = { ...defaultConfig(cwd) };
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer ?? {})) if (value !== undefined) merged[key] = value;
  }
  const config = merged as unknown as ResolvedConfig;
  config.repoPath = isAbsolute(config.repoPath) ? config.repoPath : resolve(cwd, config.repoPath);
  return config;
}

/**
 * How loadConfig built a config object. A ConfigReloader given that object swaps its file layer for a fresh
 * read instead of keeping the startup file values underneath: otherwise a key deleted from the file would
 * stay in force until a restart, and the startup warnings would be printed a second time.
 */
export interface LoadedFrom {
  cwd: string;
  base?: UserConfig;
  /** The environment layer as loadConfig read it (its `env` option may not be process.env). */
  env: UserConfig;
  /** Identity of the file text that was read (see `fileKey`). */
  key: string;
  fileConfig?: UserConfig;
  /** The config as returned, to tell which keys the caller set afterwards (a generated secret, say). */
  snapshot: Record<string, unknown>;
  /** Loaded in strict mode: a reload that finds the file unusable keeps the last good values. */
  strict: boolean;
}

const loadedFrom = new WeakMap<object, LoadedFrom>();

/** How loadConfig built this config object, if it did. */
export function loadedFromOf(config: object): LoadedFrom | undefined {
  return loadedFrom.get(config);
}

/** What decides whether a config file must be parsed again: its path and its text (or why it has none). */
export function fileKey(file: string | undefined, read: ConfigText | undefined): string {
  if (!file || !read) return "";
  return "text" in read ? `${file}\0text\0${read.text}` : `${file}\0invalid\0${read.invalid}`;
}

/**
 * Loads the configuration as the server does: defaults, then the config file, then `SERVICE_*` variables.
 * An invalid file is skipped with a warning; a wrong-typed value throws a ConfigError naming the key.
 */
export function loadConfig(options: LoadConfigOptions = {}): ResolvedConfig {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const logger = options.logger ?? consola.withTag("service");
  const strict = options.strict ?? strictFromEnv(env);
  const file = findConfigFile(cwd, env);
  const read = file ? readConfigText(file) : undefined;
  let fileConfig: UserConfig | undefined;
  if (file && read) {
    const result = parseConfigRead(file, read);
    // A typo'd key (`hostnmae`) leaves its default in force, as an invalid file would: strict refuses both.
    const problems = result.invalid ? [result.invalid] : strict ? result.warnings.map((w) => w.replace(/; ignored$/, "")) : [];
    if (strict && problems.length > 0) throw new ConfigError(`${problems.join("; ")}; ${STRICT_REFUSES}`);
    for (const warning of result.warnings) logger.warn(warning);
    if (result.invalid) logger.warn(`${result.invalid}; using environment variables and defaults only`);
    fileConfig = result.config;
  }
  const fromEnv = envConfig(env);
  const config = mergeConfig(cwd, options.base, fileConfig, fromEnv);
  loadedFrom.set(config, { cwd, base: options.base, env: fromEnv, key: fileKey(file, read), fileConfig, snapshot: { ...config }, strict });
  return config;
}
