import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { consola, type ConsolaInstance } from "consola";
import { parse as parseYaml } from "yaml";

/** Options as a user writes them: every key optional. */
export interface UserConfig {
  /** TCP port to listen on. @default 3141 */
  port?: number;
  /** Directory where `git pull` and the run script execute. @default process.cwd() */
  repoPath?: string;
  /** Command run after the pull; may be multi-line. @default "npm run deploy" */
  runScript?: string;
  /** Maximum time the run script may take, in milliseconds. @default 1800000 */
  runTimeoutMs?: number;
  /** Roll back to the pre-pull commit when the run fails. @default false */
  rollbackOnFailure?: boolean;
  /** URL path that accepts the webhook. @default "/" */
  path?: string;
  /** Webhook secret. @default generated and stored in `.service.secret` */
  secret?: string;
  /** Most deploys waiting per repoPath; past it a POST gets 429. @default 100 */
  queueLimit?: number;
  /** Address to listen on; `127.0.0.1` behind a reverse proxy on the same machine. @default "0.0.0.0" */
  hostname?: string;
  /** Silence after which a streamed deploy writes a heartbeat line, in milliseconds. @default 15000 */
  heartbeatMs?: number;
  /** Deploy only pushes to this branch: a push payload naming another ref is answered "skipped". @default none */
  branch?: string;
  /** Answer at once with the deploy id instead of streaming it (for Git hosts that time out). @default false */
  acknowledge?: boolean;
  /** Largest request body accepted (read only to check a signature or the branch); larger gets 413. @default 26214400 */
  maxBodyBytes?: number;
  /** Retention: the files of this many newest deploys are kept. @default 200 */
  keepDeploys?: number;
  /** Retention: deploy files older than this many days are removed; 0 keeps them whatever their age. @default 0 */
  keepDays?: number;
  /** Most output one deploy's .log keeps (a truncation mark follows); the live stream has everything. @default 10485760 */
  maxLogBytes?: number;
  /** Route by `X-Forwarded-Host` (set by your reverse proxy) instead of `Host`. @default false */
  trustProxy?: boolean;
  /** Multi-app mode: several apps, each with its own host, path, repository, run script and secret. */
  apps?: AppConfig[];
}

/** One entry of `apps`; keys it does not set come from the top level (except `secret`, never inherited). */
export interface AppConfig extends Omit<UserConfig, "port" | "hostname" | "trustProxy" | "apps"> {
  name: string;
  /** Host name matched against the request (port stripped, case-insensitive). */
  host: string;
  path: string;
  repoPath: string;
  runScript: string;
}

/** Options after defaults, the config file and the environment are applied. */
export interface ResolvedConfig extends Required<Omit<UserConfig, "secret" | "branch" | "apps">> {
  /** Absent until a secret is configured or `ensureWebhookSecret` generates one. */
  secret?: string;
  branch?: string;
  /** The `apps` entries as written (validated per field); empty in single-app mode. */
  apps: AppConfig[];
}

/** Config file names looked up in the working directory, first existing wins. */
export const CONFIG_FILE_NAMES = ["service.yaml", "service.yml", ".service.yaml", ".service.yml"] as const;

export function defaultConfig(cwd = process.cwd()): ResolvedConfig {
  return {
    port: 3141,
    repoPath: cwd,
    runScript: "npm run deploy",
    runTimeoutMs: 1_800_000,
    rollbackOnFailure: false,
    path: "/",
    queueLimit: 100,
    hostname: "0.0.0.0",
    heartbeatMs: 15_000,
    acknowledge: false,
    maxBodyBytes: 25 * 1024 * 1024,
    keepDeploys: 200,
    keepDays: 0,
    maxLogBytes: 10 * 1024 * 1024,
    trustProxy: false,
    apps: [],
  };
}

type Kind = "port" | "positiveInt" | "count" | "boolean" | "string" | "urlPath" | "apps";

/** Every key: its type, its snake_case spelling and its environment variable. */
export const KEYS: Record<keyof UserConfig, { kind: Kind; env: string }> = {
  port: { kind: "port", env: "SERVICE_PORT" },
  repoPath: { kind: "string", env: "SERVICE_REPO_PATH" },
  runScript: { kind: "string", env: "SERVICE_RUN_SCRIPT" },
  runTimeoutMs: { kind: "positiveInt", env: "SERVICE_RUN_TIMEOUT_MS" },
  rollbackOnFailure: { kind: "boolean", env: "SERVICE_ROLLBACK_ON_FAILURE" },
  path: { kind: "urlPath", env: "SERVICE_PATH" },
  secret: { kind: "string", env: "SERVICE_SECRET" },
  queueLimit: { kind: "positiveInt", env: "SERVICE_QUEUE_LIMIT" },
  hostname: { kind: "string", env: "SERVICE_HOSTNAME" },
  heartbeatMs: { kind: "positiveInt", env: "SERVICE_HEARTBEAT_MS" },
  branch: { kind: "string", env: "SERVICE_BRANCH" },
  acknowledge: { kind: "boolean", env: "SERVICE_ACKNOWLEDGE" },
  maxBodyBytes: { kind: "positiveInt", env: "SERVICE_MAX_BODY_BYTES" },
  keepDeploys: { kind: "positiveInt", env: "SERVICE_KEEP_DEPLOYS" },
  keepDays: { kind: "count", env: "SERVICE_KEEP_DAYS" },
  maxLogBytes: { kind: "positiveInt", env: "SERVICE_MAX_LOG_BYTES" },
  trustProxy: { kind: "boolean", env: "SERVICE_TRUST_PROXY" },
  apps: { kind: "apps", env: "" },
};

/** Keys an `apps` entry may set: its own, and the per-deploy top-level keys. */
const APP_KEYS = new Set(["name", "host", ...Object.keys(KEYS).filter((k) => !["port", "hostname", "trustProxy", "apps"].includes(k))]);

const KEY_NAMES = Object.keys(KEYS) as (keyof UserConfig)[];

/** A config value the service cannot use; the message names the key and where it came from. */
export class ConfigError extends Error {
  override name = "ConfigError";
  /** Each problem on its own (a list of apps can have several); the message is them, one per line. */
  readonly problems: string[];
  constructor(problems: string | string[]) {
    const list = typeof problems === "string" ? [problems] : problems;
    super(list.join("\n"));
    this.problems = list;
  }
}

const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return String(value);
  } catch {
    // A mapping whose keys shadow toString/valueOf (`port: {toString: 1}`) has no string form.
    return Object.prototype.toString.call(value);
  }
}

function coerce(kind: Kind, value: unknown, fromEnv: boolean, where: string): unknown {
  const fail = (expected: string) => {
    throw new ConfigError(`${where}: expected ${expected}, got ${describe(value)}`);
  };
  switch (kind) {
    case "port":
    case "count":
    case "positiveInt": {
      const n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
      const expected = { port: "an integer port (0-65535)", count: "a whole number (0 or more)", positiveInt: "a positive integer" }[kind];
      if (typeof n !== "number" || !Number.isSafeInteger(n)) return fail(expected);
      if (kind === "count" && n < 0) return fail(expected);
      if (kind === "port" && (n < 0 || n > 65535)) return fail("an integer port (0-65535)");
      if (kind === "positiveInt" && n <= 0) return fail("a positive integer");
      return n;
    }
    case "boolean": {
      if (typeof value === "boolean") return value;
      const s = typeof value === "string" ? value.trim().toLowerCase() : undefined;
      if (fromEnv || typeof value === "string") {
        if (s && ["1", "true", "yes", "on"].includes(s)) return true;
        if (s && ["0", "false", "no", "off"].includes(s)) return false;
      }
      return fail("true or false");
    }
    case "string":
      if (typeof value === "string") return value;
      if (typeof value === "number" && !fromEnv) return String(value);
      return fail("a string");
    case "urlPath":
      if (typeof value !== "string" || !value.startsWith("/")) return fail('a URL path starting with "/"');
      return value;
    case "apps":
    {
      if (!Array.isArray(value)) return fail("a list of apps");
      // Every problem of every entry is reported at once, so one `service check` shows them all.
      const problems: string[] = [];
      const apps = value.map((entry, index) => normalizeApp(entry, `${where}, entry ${index + 1}`, problems));
      if (problems.length > 0) throw new ConfigError(problems);
      return apps;
    }
  }
}

/**
 * One `apps` entry: known keys only, each of the right type; required fields are checked by resolveApps. Each
 * problem is added to `problems` and the entry's other keys are still looked at.
 */
function normalizeApp(raw: unknown, where: string, problems: string[]): AppConfig {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    problems.push(`${where}: expected a mapping (name, host, path, repoPath, runScript, secret)`);
    return {} as AppConfig;
  }
  const label = typeof (raw as { name?: unknown }).name === "string" ? `${where} ("${(raw as { name: string }).name}")` : where;
  const out: Record<string, unknown> = {};
  for (const [rawKey, value] of Object.entries(raw)) {
    const key = toCamel(rawKey);
    if (!APP_KEYS.has(key)) {
      problems.push(`${label}: key "${rawKey}" is not allowed in an app (allowed: ${[...APP_KEYS].join(", ")})`);
      continue;
    }
    if (value === null || value === undefined) continue;
    const kind: Kind = key === "name" || key === "host" ? "string" : KEYS[key as keyof UserConfig].kind;
    try {
      out[key] = coerce(kind, value, false, `${label}: key "${rawKey}"`);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
    }
  }
  return out as unknown as AppConfig;
}

function closest(key: string): string | undefined {
  let best: string | undefined;
  let bestScore = 3;
  for (const candidate of KEY_NAMES) {
    const score = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (score < bestScore) [best, bestScore] = [candidate, score];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** Validates a parsed config mapping (snake_case or camelCase keys) into a UserConfig. */
export function normalizeUserConfig(raw: unknown, source: string, warnings: string[] = [], errors?: string[]): UserConfig {
  if (raw === null || raw === undefined) return {};
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError(`${source}: the top level must be a mapping of keys to values`);
  }
  const out: Record<string, unknown> = {};
  for (const [rawKey, value] of Object.entries(raw)) {
    const key = toCamel(rawKey) as keyof UserConfig;
    // Own keys only: `toString: x` or `constructor: 1` are unknown keys, not Object.prototype's.
    const spec = Object.hasOwn(KEYS, key) ? KEYS[key] : undefined;
    if (!spec) {
      const hint = closest(key);
      warnings.push(`${source}: unknown key "${rawKey}"${hint ? ` (did you mean "${hint}"?)` : ""}; ignored`);
      continue;
    }
    if (value === null || value === undefined) continue;
    try {
      out[key] = coerce(spec.kind, value, false, `${source}: key "${rawKey}"`);
    } catch (error) {
      // With `errors`, every wrong value is collected (service check); without, the first one throws.
      if (!errors || !(error instanceof ConfigError)) throw error;
      errors.push(...error.problems);
    }
  }
  return out as UserConfig;
}

/** The `SERVICE_*` variables as a UserConfig. The only place the environment is read for options. */
export function envConfig(env: NodeJS.ProcessEnv = process.env, errors?: string[]): UserConfig {
  const out: Record<string, unknown> = {};
  for (const key of KEY_NAMES) {
    const { kind, env: name } = KEYS[key];
    if (!name) continue;
    const value = env[name];
    if (value === undefined || value === "") continue;
    try {
      out[key] = coerce(kind, value, true, `environment variable ${name}`);
    } catch (error) {
      if (!errors || !(error instanceof ConfigError)) throw error;
      errors.push(error.message);
    }
  }
  return out as UserConfig;
}

/** The config file that applies: `SERVICE_CONFIG`, else the first of CONFIG_FILE_NAMES in `cwd`. */
export function findConfigFile(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.SERVICE_CONFIG) return resolve(cwd, env.SERVICE_CONFIG);
  for (const name of CONFIG_FILE_NAMES) {
    const candidate = resolve(cwd, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

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

export function readConfigText(file: string): ConfigText {
  try {
    return { text: readFileSync(file, "utf8") };
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
    return { invalid: `cannot read ${file}: ${(error as Error).message}`, missing };
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
  const file = findConfigFile(cwd, env);
  const read = file ? readConfigText(file) : undefined;
  let fileConfig: UserConfig | undefined;
  if (file && read) {
    const result = parseConfigRead(file, read);
    for (const warning of result.warnings) logger.warn(warning);
    if (result.invalid) logger.warn(`${result.invalid}; using environment variables and defaults only`);
    fileConfig = result.config;
  }
  const fromEnv = envConfig(env);
  const config = mergeConfig(cwd, options.base, fileConfig, fromEnv);
  loadedFrom.set(config, { cwd, base: options.base, env: fromEnv, key: fileKey(file, read), fileConfig, snapshot: { ...config } });
  return config;
}
