/**
 * Every key of a configuration: its type, its environment variable, and how a value written in a file or the
 * environment is checked and converted into it.
 */
import { isIP } from "../system/ip.ts";
import { ConfigError, MAX_TIMER_MS, SERVICE_KEYS, type AppConfig, type UserConfig } from "./schema.ts";
import { normalizeNotify, normalizeStatus } from "./notify.ts";
import { normalizeEnv } from "./env.ts";
import { normalizeFreeze } from "./freeze.ts";
import { normalizeReleases, RELEASES_ENV } from "./releases.ts";
import { GATE_ENV, normalizeGate } from "./gate.ts";
import { LIMITS_ENV, normalizeLimits } from "./limits.ts";
import { normalizeAudit, normalizeMcp } from "./audit.ts";
import { normalizeOidc, normalizeTrustedHeader } from "./people.ts";
import { closestName } from "./suggest.ts";

type Kind =
  | "port"
  | "positiveInt"
  | "count"
  | "ms"
  | "boolean"
  | "string"
  | "hostname"
  | "names"
  | "urlPath"
  | "httpUrl"
  | "apps"
  | "status"
  | "notify"
  | "env"
  | "queuePolicy"
  | "pullMode"
  | "releases"
  | "gate"
  | "limits"
  | "freeze"
  | "markers"
  | "tokens"
  | "envFormat"
  | "audit"
  | "mcp"
  | "oidc"
  | "trustedHeader";

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** Every key: its type, its snake_case spelling and its environment variable. */
export const KEYS: Record<keyof UserConfig, { kind: Kind; env: string; min?: number; moreEnv?: string[] }> = {
  port: { kind: "port", env: "SERVICE_PORT" },
  repoPath: { kind: "string", env: "SERVICE_REPO_PATH" },
  runScript: { kind: "string", env: "SERVICE_RUN_SCRIPT" },
  runTimeoutMs: { kind: "ms", env: "SERVICE_RUN_TIMEOUT_MS" },
  rollbackOnFailure: { kind: "boolean", env: "SERVICE_ROLLBACK_ON_FAILURE" },
  pull: { kind: "pullMode", env: "SERVICE_PULL" },
  path: { kind: "urlPath", env: "SERVICE_PATH" },
  secret: { kind: "string", env: "SERVICE_SECRET" },
  queueLimit: { kind: "positiveInt", env: "SERVICE_QUEUE_LIMIT" },
  queuePolicy: { kind: "queuePolicy", env: "SERVICE_QUEUE_POLICY" },
  hostname: { kind: "hostname", env: "SERVICE_HOSTNAME" },
  heartbeatMs: { kind: "ms", env: "SERVICE_HEARTBEAT_MS" },
  branch: { kind: "string", env: "SERVICE_BRANCH" },
  events: { kind: "names", env: "SERVICE_EVENTS" },
  deployRefs: { kind: "names", env: "SERVICE_DEPLOY_REFS" },
  tags: { kind: "string", env: "SERVICE_TAGS" },
  dedupeDeliveries: { kind: "boolean", env: "SERVICE_DEDUPE_DELIVERIES" },
  acknowledge: { kind: "boolean", env: "SERVICE_ACKNOWLEDGE" },
  maxBodyBytes: { kind: "positiveInt", env: "SERVICE_MAX_BODY_BYTES" },
  keepDeploys: { kind: "positiveInt", env: "SERVICE_KEEP_DEPLOYS" },
  keepDays: { kind: "count", env: "SERVICE_KEEP_DAYS" },
  maxLogBytes: { kind: "positiveInt", env: "SERVICE_MAX_LOG_BYTES" },
  trustProxy: { kind: "boolean", env: "SERVICE_TRUST_PROXY" },
  boundConnections: { kind: "boolean", env: "SERVICE_BOUND_CONNECTIONS" },
  status: { kind: "status", env: "" },
  notify: { kind: "notify", env: "" },
  healthCheckUrl: { kind: "httpUrl", env: "SERVICE_HEALTH_CHECK_URL" },
  healthCheck: { kind: "string", env: "SERVICE_HEALTH_CHECK" },
  healthCheckTimeoutMs: { kind: "ms", env: "SERVICE_HEALTH_CHECK_TIMEOUT_MS" },
  healthCheckIntervalMs: { kind: "ms", env: "SERVICE_HEALTH_CHECK_INTERVAL_MS" },
  pollIntervalMs: { kind: "ms", env: "SERVICE_POLL_INTERVAL_MS", min: 5_000 },
  allowedSigners: { kind: "string", env: "SERVICE_ALLOWED_SIGNERS" },
  env: { kind: "env", env: "" },
  envFile: { kind: "string", env: "SERVICE_ENV_FILE" },
  envCommand: { kind: "string", env: "SERVICE_ENV_COMMAND" },
  envCommandFormat: { kind: "envFormat", env: "SERVICE_ENV_COMMAND_FORMAT" },
  envCommandTimeoutMs: { kind: "ms", env: "SERVICE_ENV_COMMAND_TIMEOUT_MS" },
  ageIdentityFile: { kind: "string", env: "SERVICE_AGE_IDENTITY_FILE" },
  releases: {
    kind: "releases",
    env: RELEASES_ENV.path,
    moreEnv: [RELEASES_ENV.keep, RELEASES_ENV.shared, RELEASES_ENV.carry],
  },
  gate: { kind: "gate", env: GATE_ENV.checks, moreEnv: [GATE_ENV.waitMs, GATE_ENV.bakeMs] },
  limits: {
    kind: "limits",
    env: LIMITS_ENV.memory,
    moreEnv: [
      LIMITS_ENV.cpu,
      LIMITS_ENV.tasks,
      LIMITS_ENV.nice,
      LIMITS_ENV.ioNice,
      LIMITS_ENV.leftovers,
      LIMITS_ENV.kept,
    ],
  },
  activateScript: { kind: "string", env: "SERVICE_ACTIVATE_SCRIPT" },
  freeze: { kind: "freeze", env: "SERVICE_FREEZE" },
  catchUp: { kind: "boolean", env: "SERVICE_CATCH_UP" },
  paths: { kind: "names", env: "SERVICE_PATHS" },
  skipMarkers: { kind: "markers", env: "SERVICE_SKIP_MARKERS" },
  // GitHub deployment events (triggers/deployment.ts) and what their statuses link to.
  deploymentEvents: { kind: "boolean", env: "SERVICE_DEPLOYMENT_EVENTS" },
  environment: { kind: "string", env: "SERVICE_ENVIRONMENT" },
  deploymentCreators: { kind: "names", env: "SERVICE_DEPLOYMENT_CREATORS" },
  adminPublicUrl: { kind: "httpUrl", env: "SERVICE_ADMIN_PUBLIC_URL" },
  environmentUrl: { kind: "httpUrl", env: "SERVICE_ENVIRONMENT_URL" },
  apps: { kind: "apps", env: "" },
  maxConcurrentDeploys: { kind: "count", env: "SERVICE_MAX_CONCURRENT_DEPLOYS" },
  adminPort: { kind: "port", env: "SERVICE_ADMIN_PORT" },
  adminHostname: { kind: "hostname", env: "SERVICE_ADMIN_HOSTNAME" },
  adminToken: { kind: "string", env: "SERVICE_ADMIN_TOKEN" },
  // Each entry's fields, roles and files are checked by tokens/list.ts, at start and by `service check`.
  tokens: { kind: "tokens", env: "" },
  adminMcp: { kind: "mcp", env: "SERVICE_ADMIN_MCP" },
  audit: { kind: "audit", env: "" },
  // People at the dashboard (config/people.ts): their provider, or the proxy that names them.
  adminOidc: { kind: "oidc", env: "" },
  adminTrustedHeader: { kind: "trustedHeader", env: "" },
  adminTokenLogin: { kind: "boolean", env: "SERVICE_ADMIN_TOKEN_LOGIN" },
  adminSessionHours: { kind: "positiveInt", env: "SERVICE_ADMIN_SESSION_HOURS" },
  // SERVICE_SKIP_HTTPS_PROMPT=1 is its variable, read where the question is (ops/https.ts).
  httpsPrompt: { kind: "boolean", env: "" },
};

/** Keys an `apps` entry may set: its own, and the per-deploy top-level keys. */
const APP_KEYS = new Set([
  "name",
  "host",
  ...Object.keys(KEYS).filter((k) => !(SERVICE_KEYS as readonly string[]).includes(k)),
]);

const KEY_NAMES = Object.keys(KEYS) as (keyof UserConfig)[];

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

function coerce(kind: Kind, value: unknown, fromEnv: boolean, where: string, min = 0): unknown {
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
      if (n < min) return fail(`at least ${min} milliseconds`);
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
    case "names": {
      // A list, or one string of comma-separated names (the environment's only form).
      const items = typeof value === "string" ? value.split(",") : value;
      if (!Array.isArray(items) || !items.every((item) => typeof item === "string")) return fail("a list of names");
      const names = items.map((item: string) => item.trim()).filter(Boolean);
      if (names.length === 0) return fail("a list of at least one name");
      return names;
    }
    case "urlPath":
      if (typeof value !== "string" || !value.startsWith("/")) return fail('a URL path starting with "/"');
      // A request's path never holds these raw (they arrive percent-encoded): such a webhook could never match.
      if (/[\x00-\x20\x7f?#]/.test(value))
        return fail('a URL path starting with "/", without spaces, control characters, "?" or "#"');
      return value;
    case "httpUrl": {
      // Checked now: a typo would otherwise fail every deploy, after the whole health check timeout.
      const url = typeof value === "string" && URL.canParse(value) ? new URL(value) : undefined;
      if (url && (url.protocol === "http:" || url.protocol === "https:")) return value;
      return fail("an http:// or https:// URL (like http://127.0.0.1:8080/up)");
    }
    case "hostname":
      // An address the listener can bind: a typo here must not leave the server on another address.
      if (typeof value === "string" && (isIP(value) || HOST_NAME.test(value))) return value;
      return fail(
        "an IP address or host name to listen on (like 127.0.0.1, ::1, 0.0.0.0 or localhost; no scheme, no port)",
      );
    case "status":
    case "notify":
    case "env": {
      const problems: string[] = [];
      const normalize = { status: normalizeStatus, notify: normalizeNotify, env: normalizeEnv }[kind];
      const out = normalize(value, where, problems);
      if (problems.length > 0) throw new ConfigError(problems);
      return out;
    }
    case "freeze":
    case "releases":
    case "gate":
    case "limits": {
      const problems: string[] = [];
      const normalize = {
        freeze: normalizeFreeze,
        releases: normalizeReleases,
        gate: normalizeGate,
        limits: normalizeLimits,
      }[kind];
      const out = normalize(value, where, problems, fromEnv);
      if (problems.length > 0) throw new ConfigError(problems);
      return out;
    }
    case "markers":
      // true (the default markers), false, or a list of markers of its own (the environment: comma-separated).
      if (
        typeof value === "boolean" ||
        (typeof value === "string" && /^\s*(1|0|true|false|yes|no|on|off)\s*$/i.test(value))
      )
        return coerce("boolean", value, fromEnv, where);
      return coerce("names", value, fromEnv, where);
    case "audit": {
      const problems: string[] = [];
      const out = normalizeAudit(value, where, problems);
      if (problems.length > 0) throw new ConfigError(problems);
      return out;
    }
    case "mcp":
      try {
        return normalizeMcp(value);
      } catch (error) {
        return fail((error as Error).message.replace(/^expected /, ""));
      }
    case "oidc":
    case "trustedHeader": {
      const problems: string[] = [];
      const out = (kind === "oidc" ? normalizeOidc : normalizeTrustedHeader)(value, where, problems);
      if (problems.length > 0) throw new ConfigError(problems);
      return out;
    }
    case "tokens":
      if (!Array.isArray(value)) return fail("a list of tokens ({ name, role, apps?, file })");
      return value;
    case "envFormat":
      if (value === "dotenv" || value === "json") return value;
      return fail('"dotenv" (KEY=value lines) or "json" (an object of strings)');
    case "queuePolicy":
      if (value === "fifo" || value === "latest") return value;
      return fail('"fifo" or "latest"');
    case "pullMode":
      if (value === "pull" || value === "reset") return value;
      return fail('"pull" (git pull) or "reset" (git fetch, then git reset --hard to the remote branch\'s tip)');
    case "apps": {
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
  const label =
    typeof (raw as { name?: unknown }).name === "string" ? `${where} ("${(raw as { name: string }).name}")` : where;
  const out: Record<string, unknown> = {};
  for (const [rawKey, value] of Object.entries(raw)) {
    const key = toCamel(rawKey);
    if (!APP_KEYS.has(key)) {
      problems.push(`${label}: key "${rawKey}" is not allowed in an app (allowed: ${[...APP_KEYS].join(", ")})`);
      continue;
    }
    if (value === null || value === undefined) continue;
    const spec = key === "name" || key === "host" ? { kind: "string" as const } : KEYS[key as keyof UserConfig];
    try {
      out[key] = coerce(spec.kind, value, false, `${label}: key "${rawKey}"`, "min" in spec ? spec.min : undefined);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
    }
  }
  return out as unknown as AppConfig;
}

/**
 * Validates a parsed config mapping (snake_case or camelCase keys) into a UserConfig. An unknown key is added
 * to `unknownKeys` and skipped. With `errors`, a wrong value is added to it (one ConfigError per key) and left
 * out; without, the first one throws.
 */
export function normalizeUserConfig(
  raw: unknown,
  source: string,
  unknownKeys: string[] = [],
  errors?: ConfigError[],
): UserConfig {
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
      const hint = closestName(key, KEY_NAMES);
      unknownKeys.push(`${source}: unknown key "${rawKey}"${hint ? ` (did you mean "${hint}"?)` : ""}`);
      continue;
    }
    if (value === null || value === undefined) continue;
    try {
      out[key] = coerce(spec.kind, value, false, `${source}: key "${rawKey}"`, spec.min);
    } catch (error) {
      if (!errors || !(error instanceof ConfigError)) throw error;
      errors.push(error);
    }
  }
  return out as UserConfig;
}

/** The keys whose fields have a variable each: together they make one value, merged over the file's. */
const FIELDS_ENV = { releases: RELEASES_ENV, gate: GATE_ENV, limits: LIMITS_ENV } as const;

/** The fields of such a key the environment sets, as raw text; undefined when it sets none. */
function fieldsFromEnv(env: NodeJS.ProcessEnv, names: Record<string, string>): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const [field, name] of Object.entries(names)) {
    const value = env[name];
    if (value !== undefined && value !== "") out[field] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The `SERVICE_*` variables as a UserConfig. The only place the environment is read for options. */
export function envConfig(env: NodeJS.ProcessEnv = process.env, errors?: string[]): UserConfig {
  const out: Record<string, unknown> = {};
  for (const key of KEY_NAMES) {
    const { kind, env: name, min } = KEYS[key];
    if (!name) continue;
    // The key's fields have a variable each; together they make one value.
    const fields = FIELDS_ENV[kind as keyof typeof FIELDS_ENV];
    const value = fields ? fieldsFromEnv(env, fields) : env[name];
    if (value === undefined || value === "") continue;
    try {
      out[key] = coerce(kind, value, true, `environment variable ${name}`, min);
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
