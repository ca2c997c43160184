/**
 * The checks of the `watch` key (docs/watch.md) as a user writes it, its defaults, the Prometheus URL the
 * environment gives, the credentials read from their 0600 file, and the query's placeholders filled in escaped for
 * PromQL strings. What the watch does is watch/watch.ts.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { readNoFollow } from "../system/files.ts";
import { show } from "./show.ts";

/** The Prometheus form: one query whose value must stay within `max` (and/or `min`). */
export interface WatchPrometheus {
  /** Prometheus's base URL (`SERVICE_WATCH_PROMETHEUS_URL` overrides it). */
  url?: string;
  query: string;
  /** A check fails when the value is above `max`. */
  max?: number;
  /** A check fails when the value is below `min`. */
  min?: number;
  /** A file (mode 0600) whose first line is a bearer token. */
  bearerFile?: string;
  /** A file (mode 0600) whose first line is `user:password` for basic auth. */
  basicAuthFile?: string;
}

/** The watch after `health` (key `watch`, top level or per app). */
export interface WatchSettings {
  /** How long the watch lasts. @default 300000 */
  forMs?: number;
  /** The time between two checks. @default 15000 */
  intervalMs?: number;
  /** Consecutive failed checks that make a breach. @default 2 */
  failures?: number;
  prometheus?: WatchPrometheus;
  /** Instead of `prometheus`: a command run at each check, exit 0 passes. */
  command?: string;
  /** What a breach does. @default rollback */
  onBreach?: "rollback" | "notify";
}

/** The watch with its defaults. */
export type ResolvedWatch = Required<Pick<WatchSettings, "forMs" | "intervalMs" | "failures" | "onBreach">> &
  Pick<WatchSettings, "prometheus" | "command">;

/** A check command gets at least this long, however short the interval (watch/command.ts). */
export const MIN_COMMAND_MS = 10_000;

/** Overrides the Prometheus URL of every watch that queries one. */
export const WATCH_PROMETHEUS_URL_ENV = "SERVICE_WATCH_PROMETHEUS_URL";

export const WATCH_DEFAULTS = { forMs: 300_000, intervalMs: 15_000, failures: 2, onBreach: "rollback" } as const;

/** The placeholders a query may hold: the values of the deploy's record. */
export const WATCH_PLACEHOLDERS = ["commit", "previousCommit", "deployId", "app"] as const;
export type WatchValues = Partial<Record<(typeof WATCH_PLACEHOLDERS)[number], string | null>>;

const FIELDS = ["forMs", "intervalMs", "failures", "prometheus", "command", "onBreach"];
const PROMETHEUS_FIELDS = ["url", "query", "max", "min", "bearerFile", "basicAuthFile"];
const MAX_MS = 2 ** 31 - 1;

const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const isMapping = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Checks a `watch` value; every problem goes to `problems`. */
export function normalizeWatch(value: unknown, where: string, problems: string[]): WatchSettings {
  if (!isMapping(value)) {
    problems.push(`${where}: expected a mapping (forMs, intervalMs, failures, prometheus or command, onBreach)`);
    return {};
  }
  const out: WatchSettings = {};
  const before = problems.length;
  for (const [rawKey, item] of Object.entries(value)) {
    const key = toCamel(rawKey);
    const at = `${where}: ${rawKey}`;
    if (!FIELDS.includes(key)) problems.push(`${where}: unknown key "${rawKey}" (allowed: ${FIELDS.join(", ")})`);
    else if (item === null || item === undefined) continue;
    else if (key === "forMs" || key === "intervalMs" || key === "failures") {
      const n = typeof item === "string" && /^\s*\d+\s*$/.test(item) ? Number(item) : item;
      const least = key === "intervalMs" ? 100 : 1;
      if (typeof n === "number" && Number.isSafeInteger(n) && n >= least && n <= MAX_MS) out[key] = n;
      else
        problems.push(
          `${at}: expected a whole number${key === "failures" ? " of checks" : " of milliseconds"} of at least ${least}, got ${show(item)}`,
        );
    } else if (key === "command") {
      if (typeof item === "string" && item.trim() !== "") out.command = item;
      else problems.push(`${at}: expected a command (exit 0 passes), got ${show(item)}`);
    } else if (key === "onBreach") {
      if (item === "rollback" || item === "notify") out.onBreach = item;
      else problems.push(`${at}: expected rollback or notify, got ${show(item)}`);
    } else {
      const prometheus = normalizePrometheus(item, at, problems);
      if (prometheus) out.prometheus = prometheus;
    }
  }
  if (problems.length === before) {
    if (out.prometheus && out.command) problems.push(`${where}: set prometheus or command, not both`);
    else if (!out.prometheus && !out.command)
      problems.push(`${where}: needs prometheus (url, query, max or min) or command (exit 0 passes)`);
    else if ((out.intervalMs ?? WATCH_DEFAULTS.intervalMs) > (out.forMs ?? WATCH_DEFAULTS.forMs))
      problems.push(`${where}: intervalMs is longer than forMs: the watch would make no second check`);
  }
  return out;
}

function normalizePrometheus(value: unknown, where: string, problems: string[]): WatchPrometheus | undefined {
  if (!isMapping(value)) {
    problems.push(`${where}: expected a mapping (url, query, max or min, bearerFile or basicAuthFile)`);
    return undefined;
  }
  const out: Partial<WatchPrometheus> = {};
  const before = problems.length;
  for (const [rawKey, item] of Object.entries(value)) {
    const key = toCamel(rawKey);
    const at = `${where}: ${rawKey}`;
    if (!PROMETHEUS_FIELDS.includes(key))
      problems.push(`${where}: unknown key "${rawKey}" (allowed: ${PROMETHEUS_FIELDS.join(", ")})`);
    else if (item === null || item === undefined) continue;
    else if (key === "max" || key === "min") {
      const n = typeof item === "string" && item.trim() !== "" ? Number(item) : item;
      if (typeof n === "number" && Number.isFinite(n)) out[key] = n;
      else problems.push(`${at}: expected a number, got ${show(item)}`);
    } else if (typeof item !== "string" || item.trim() === "") problems.push(`${at}: expected text, got ${show(item)}`);
    else if (key === "url") {
      const problem = urlProblem(item);
      if (problem) problems.push(`${at}: ${problem}`);
      else out.url = item;
    } else if (key === "query") {
      const unknown = unknownPlaceholder(item);
      if (unknown)
        problems.push(`${at}: unknown placeholder {{${unknown}}} (allowed: ${WATCH_PLACEHOLDERS.join(", ")})`);
      else out.query = item;
    } else out[key as "bearerFile" | "basicAuthFile"] = item;
  }
  if (problems.length > before) return undefined;
  if (out.query === undefined) problems.push(`${where}: "query" is required (a PromQL expression giving one value)`);
  else if (out.max === undefined && out.min === undefined)
    problems.push(`${where}: needs max or min (a check fails when the value is above max or below min)`);
  else if (out.bearerFile && out.basicAuthFile) problems.push(`${where}: set bearerFile or basicAuthFile, not both`);
  else return out as WatchPrometheus;
  return undefined;
}

/** Why `url` is no Prometheus base URL, or undefined. */
export function urlProblem(url: string): string | undefined {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:"))
    return `expected an http:// or https:// URL (like http://127.0.0.1:9090), got ${show(url)}`;
  if (parsed.username || parsed.password) return "credentials go in bearerFile or basicAuthFile, never in the URL";
  return undefined;
}

function unknownPlaceholder(query: string): string | undefined {
  for (const match of query.matchAll(/\{\{\s*([^}]*?)\s*\}\}/g))
    if (!(WATCH_PLACEHOLDERS as readonly string[]).includes(match[1]!)) return match[1]!;
  return undefined;
}

/** The watch with its defaults; the environment's URL over the file's. */
export function resolveWatch(watch: WatchSettings, env: NodeJS.ProcessEnv = {}): ResolvedWatch {
  const url = env[WATCH_PROMETHEUS_URL_ENV]?.trim();
  return {
    forMs: watch.forMs ?? WATCH_DEFAULTS.forMs,
    intervalMs: watch.intervalMs ?? WATCH_DEFAULTS.intervalMs,
    failures: watch.failures ?? WATCH_DEFAULTS.failures,
    onBreach: watch.onBreach ?? WATCH_DEFAULTS.onBreach,
    ...(watch.prometheus ? { prometheus: { ...watch.prometheus, ...(url ? { url } : {}) } } : {}),
    ...(watch.command ? { command: watch.command } : {}),
  };
}

/** A value for a PromQL string literal (double or single quoted): backslashes, quotes and line ends escaped. */
export function promqlString(value: string): string {
  return value.replace(/[\\"'\n\r\t]/g, (c) => ({ "\n": "\\n", "\r": "\\r", "\t": "\\t" })[c] ?? `\\${c}`);
}

/** The query with its placeholders filled in (escaped for PromQL strings; an unknown value is empty). */
export function fillQuery(query: string, values: WatchValues): string {
  return query.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (whole, name: string) =>
    (WATCH_PLACEHOLDERS as readonly string[]).includes(name)
      ? promqlString(values[name as keyof WatchValues] ?? "")
      : whole,
  );
}

/**
 * The `Authorization` header the settings' file gives, or why it cannot: the file must be readable by its owner
 * alone (0600), and its first line is the token, or `user:password`.
 */
export function watchAuthorization(
  prometheus: WatchPrometheus,
  cwd: string,
): { header?: string; secret?: string } | { problem: string } {
  const key = prometheus.bearerFile ? "bearerFile" : prometheus.basicAuthFile ? "basicAuthFile" : undefined;
  if (!key) return {};
  const file = resolve(cwd, prometheus[key]!);
  let line: string;
  try {
    const mode = statSync(file).mode & 0o777;
    if ((mode & 0o077) !== 0)
      return {
        problem: `${key}: ${file} can be read by other users (mode ${mode.toString(8).padStart(4, "0")}): run chmod 600 ${file}`,
      };
    line = (readNoFollow(file, true).split("\n")[0] ?? "").trim();
  } catch (error) {
    return {
      problem: `${key}: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    };
  }
  if (!line) return { problem: `${key}: ${file} is empty` };
  if (key === "bearerFile") return { header: `Bearer ${line}`, secret: line };
  if (!line.includes(":")) return { problem: `${key}: ${file} must hold user:password on its first line` };
  const encoded = Buffer.from(line).toString("base64");
  return { header: `Basic ${encoded}`, secret: line.slice(line.indexOf(":") + 1) };
}

/** Milliseconds as the watch says them: `2 of 5 min`, or in seconds for a watch under two minutes. */
export function watchProgress(elapsedMs: number, forMs: number): string {
  const inMinutes = forMs >= 120_000;
  const unit = inMinutes ? 60_000 : 1000;
  const shown = (ms: number) => {
    const n = ms / unit;
    return Number.isInteger(n) ? String(n) : n.toFixed(1);
  };
  return `${shown(Math.min(elapsedMs, forMs))} of ${shown(forMs)} ${inMinutes ? "min" : "s"}`;
}

/** The watch in words (`service check`): what it checks, for how long, and what a breach does. */
export function describeWatch(watch: ResolvedWatch): string {
  const what = watch.prometheus
    ? `${watch.prometheus.query} ${bounds(watch.prometheus)} (Prometheus at ${watch.prometheus.url ?? "(no url)"})`
    : `\`${watch.command}\` exits 0`;
  return `${what} every ${watch.intervalMs / 1000} s for ${watchProgress(watch.forMs, watch.forMs).split(" of ")[1]}; ${watch.failures} failed checks in a row ${watch.onBreach === "rollback" ? "roll back" : "notify"}`;
}

/** `≤ 0.05`, `≥ 10`, or both. */
export function bounds(prometheus: Pick<WatchPrometheus, "max" | "min">): string {
  return [prometheus.min !== undefined && `≥ ${prometheus.min}`, prometheus.max !== undefined && `≤ ${prometheus.max}`]
    .filter(Boolean)
    .join(" and ");
}
