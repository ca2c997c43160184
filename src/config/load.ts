import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { resolve } from "node:path";
import { defaultLogger, type Logger } from "../system/logger.ts";
import { envFlag } from "./env-keys.ts";
import { ConfigError, type UserConfig } from "./schema.ts";
import type { ResolvedConfig } from "./schema-resolved.ts";
import { type ConfigText, resolveConfig } from "./resolve.ts";

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

/** The largest config file read: it is read again whenever it changes, on a request path before authentication. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

export function readConfigText(file: string): ConfigText {
  let fd: number | undefined;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    // A device (/dev/zero) or a FIFO has no end, or none to wait for; a directory has no text.
    if (!stat.isFile())
      return {
        invalid: `cannot read ${file}: not a regular file${stat.isDirectory() ? " (a directory)" : ""}`,
        missing: false,
      };
    const tooBig = (size: number) => ({
      invalid: `${file} is ${size} bytes; a config file may be at most 1 MiB (${MAX_CONFIG_BYTES} bytes)`,
      missing: false,
    });
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

export interface LoadConfigOptions {
  /** Directory to look up the config file in and resolve relative paths against. @default process.cwd() */
  cwd?: string;
  /** Environment to read `SERVICE_*` from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Values under the config file, over the defaults (the server's base config). */
  base?: UserConfig;
  /** Where warnings (an invalid file, unknown keys) go. @default consola.withTag("service") */
  logger?: Logger;
  /**
   * Strict mode: an unreadable or invalid config file (unknown keys included, or a SERVICE_CONFIG file that is
   * missing) throws a ConfigError instead of falling back to environment and defaults.
   * @default SERVICE_STRICT_CONFIG
   */
  strict?: boolean;
}

/**
 * What a loadConfig result was resolved from, carried by the result itself (not enumerable, so a copy does not
 * carry it). A ConfigReloader given that object swaps its file layer for a fresh read instead of keeping the
 * startup file values underneath: otherwise a key deleted from the file would stay in force until a restart,
 * and the startup warnings would be printed a second time.
 */
export interface LoadedFrom {
  cwd: string;
  base?: UserConfig;
  /** The `SERVICE_*` variables as loadConfig read them (its `env` option may not be process.env). */
  env: NodeJS.ProcessEnv;
  /** Identity of the file text that was read (see `fileKey`). */
  key: string;
  fileConfig?: UserConfig;
  /** The config as returned, to tell which keys the caller set afterwards (a generated secret, say). */
  snapshot: Record<string, unknown>;
  /** Loaded in strict mode: a reload that finds the file unusable keeps the last good values. */
  strict: boolean;
}

const LOADED_FROM = Symbol("service.loadedFrom");

/** What loadConfig resolved this config object from, if it did. */
export function loadedFromOf(config: object): LoadedFrom | undefined {
  return (config as { [LOADED_FROM]?: LoadedFrom })[LOADED_FROM];
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
  const logger = options.logger ?? defaultLogger();
  const strict = options.strict ?? strictFromEnv(env);
  const file = findConfigFile(cwd, env);
  const read = file ? readConfigText(file) : undefined;
  const resolved = resolveConfig({
    cwd,
    base: options.base,
    file: file && read ? { path: file, read } : undefined,
    env,
  });
  if (resolved.fileErrors.length > 0) throw new ConfigError(resolved.fileErrors[0]!);
  // A typo'd key (`hostnmae`) leaves its default in force, as an invalid file would: strict refuses both.
  const problems = resolved.invalid ? [resolved.invalid] : strict ? resolved.unknownKeys : [];
  if (strict && problems.length > 0) throw new ConfigError(`${problems.join("; ")}; ${STRICT_REFUSES}`);
  for (const unknown of resolved.unknownKeys) logger.warn(`${unknown}; ignored`);
  if (resolved.invalid) logger.warn(`${resolved.invalid}; using environment variables and defaults only`);
  if (resolved.envErrors.length > 0) throw new ConfigError(resolved.envErrors[0]!);
  const { config, fileConfig } = resolved;
  const serviceEnv = Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith("SERVICE_")));
  const loadedFrom: LoadedFrom = {
    cwd,
    base: options.base,
    env: serviceEnv,
    key: fileKey(file, read),
    fileConfig,
    snapshot: { ...config },
    strict,
  };
  Object.defineProperty(config, LOADED_FROM, { value: loadedFrom, enumerable: false });
  return config;
}
