/**
 * What a configuration is: the keys, their types and defaults, and how a value written in a file or the
 * environment is checked and converted. Where the values come from and how they are layered is config.ts.
 */
import { isIP } from "node:net";
import { normalizeNotify, normalizeStatus, type NotifyTarget, type StatusSettings } from "./notify/settings.ts";

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
  /** Commit statuses on the forge: pending, success, failure per deploy. @default none */
  status?: StatusSettings;
  /** Where to announce deploys (chat, ntfy, your own endpoint). @default none */
  notify?: NotifyTarget[];
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
export interface ResolvedConfig extends Required<Omit<UserConfig, "secret" | "branch" | "apps" | "status" | "notify">> {
  status?: StatusSettings;
  notify?: NotifyTarget[];
  /** Absent until a secret is configured or `ensureWebhookSecret` generates one. */
  secret?: string;
  branch?: string;
  /** The `apps` entries as written (validated per field); empty in single-app mode. */
  apps: AppConfig[];
}

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

type Kind = "port" | "positiveInt" | "count" | "ms" | "boolean" | "string" | "hostname" | "urlPath" | "apps" | "status" | "notify";

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** Node and Bun timers fire at once (with a TimeoutOverflowWarning) past 2^31 - 1 ms: the most any *Ms key may be. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Every key: its type, its snake_case spelling and its environment variable. */
export const KEYS: Record<keyof UserConfig, { kind: Kind; env: string }> = {
  port: { kind: "port", env: "SERVICE_PORT" },
  repoPath: { kind: "string", env: "SERVICE_REPO_PATH" },
  runScript: { kind: "string", env: "SERVICE_RUN_SCRIPT" },
  runTimeoutMs: { kind: "ms", env: "SERVICE_RUN_TIMEOUT_MS" },
  rollbackOnFailure: { kind: "boolean", env: "SERVICE_ROLLBACK_ON_FAILURE" },
  path: { kind: "urlPath", env: "SERVICE_PATH" },
  secret: { kind: "string", env: "SERVICE_SECRET" },
  queueLimit: { kind: "positiveInt", env: "SERVICE_QUEUE_LIMIT" },
  hostname: { kind: "hostname", env: "SERVICE_HOSTNAME" },
  heartbeatMs: { kind: "ms", env: "SERVICE_HEARTBEAT_MS" },
  branch: { kind: "string", env: "SERVICE_BRANCH" },
  acknowledge: { kind: "boolean", env: "SERVICE_ACKNOWLEDGE" },
  maxBodyBytes: { kind: "positiveInt", env: "SERVICE_MAX_BODY_BYTES" },
  keepDeploys: { kind: "positiveInt", env: "SERVICE_KEEP_DEPLOYS" },
  keepDays: { kind: "count", env: "SERVICE_KEEP_DAYS" },
  maxLogBytes: { kind: "positiveInt", env: "SERVICE_MAX_LOG_BYTES" },
  trustProxy: { kind: "boolean", env: "SERVICE_TRUST_PROXY" },
  status: { kind: "status", env: "" },
  notify: { kind: "notify", env: "" },
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
    case "ms":
    case "positiveInt": {
      const n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
      const expected = {
        port: "an integer port (0-65535)",
        count: "a whole number (0 or more)",
        ms: `a positive integer of milliseconds, at most ${MAX_TIMER_MS} (about 24.8 days, the longest timer)`,
        positiveInt: "a positive integer",
      }[kind];
      if (typeof n !== "number" || !Number.isSafeInteger(n)) return fail(expected);
      if (kind === "count" && n < 0) return fail(expected);
      if (kind === "port" && (n < 0 || n > 65535)) return fail(expected);
      if ((kind === "positiveInt" || kind === "ms") && n <= 0) return fail(expected);
      if (kind === "ms" && n > MAX_TIMER_MS) return fail(expected);
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
      // A request's path never holds these raw (they arrive percent-encoded): such a webhook could never match.
      if (/[\x00-\x20\x7f?#]/.test(value)) return fail('a URL path starting with "/", without spaces, control characters, "?" or "#"');
      return value;
    case "hostname":
      // An address the listener can bind: a typo here must not leave the server on another address.
      if (typeof value === "string" && (isIP(value) || HOST_NAME.test(value))) return value;
      return fail("an IP address or host name to listen on (like 127.0.0.1, ::1, 0.0.0.0 or localhost; no scheme, no port)");
    case "status":
    case "notify": {
      const problems: string[] = [];
      const out = kind === "status" ? normalizeStatus(value, where, problems) : normalizeNotify(value, where, problems);
      if (problems.length > 0) throw new ConfigError(problems);
      return out;
    }
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

/** A yes/no `SERVICE_*` variable that is not a config key (unset or empty: false); a value that is neither throws. */
export function envFlag(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = env[name];
  if (value === undefined || value === "") return false;
  return coerce("boolean", value, true, `environment variable ${name}`) as boolean;
}
