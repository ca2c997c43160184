/** Limits on the scripts a deploy runs (key `limits`, top level or per app; system/limits.ts). */
import { show } from "./show.ts";
export interface LimitsSettings {
  /** Bytes the scripts' process tree may use together, swap included; over it the kernel kills it. */
  memory?: number;
  /** CPUs' worth of time. */
  cpu?: number;
  /** Processes and threads. */
  tasks?: number;
  /** Niceness 0-19 of the scripts. */
  nice?: number;
  /** I/O class: `idle`, `best-effort` or `best-effort:<0-7>`. */
  ioNice?: string;
  /** What the scripts left running becomes when the deploy ends. @default kill after a failed deploy, keep after an ok one */
  leftovers?: "kill" | "keep" | "move-out";
  /** The limits of the app's group that keeps what ok deploys left running. @default { tasks: 4096 } */
  kept?: { memory?: number; cpu?: number; tasks?: number };
}
/**
 * The checks of the `limits` key (docs/configuration.md "limits") as a user writes it, in a file or the
 * environment. What the limits do is system/limits.ts.
 */

/** The variables of the key's fields. */
export const LIMITS_ENV = {
  memory: "SERVICE_LIMITS_MEMORY",
  cpu: "SERVICE_LIMITS_CPU",
  tasks: "SERVICE_LIMITS_TASKS",
  nice: "SERVICE_LIMITS_NICE",
  ioNice: "SERVICE_LIMITS_IONICE",
  leftovers: "SERVICE_LIMITS_LEFTOVERS",
  /** `memory=1G,cpu=1,tasks=4096`: the fields of `kept`. */
  kept: "SERVICE_LIMITS_KEPT",
} as const;

const FIELDS = Object.keys(LIMITS_ENV);
const KEPT_FIELDS = ["memory", "cpu", "tasks"] as const;
const LEFTOVERS = ["kill", "keep", "move-out"] as const;
/** What an ok deploy's leftovers are kept under when `kept` says nothing else: never unlimited. */
export const KEPT_DEFAULT = { tasks: 4096 } as const;
/** The least memory a limit may give: below it not even a shell starts. */
const MIN_MEMORY = 4 * 1024 * 1024;
const UNITS: Record<string, number> = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** `2G`, `512M`, `1.5G`, `2GiB`, `1073741824` as bytes (units are powers of 1024); undefined when it is none. */
export function parseBytes(value: unknown): number | undefined {
  const text = typeof value === "number" ? String(value) : typeof value === "string" ? value.trim() : "";
  const match = /^(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?$/i.exec(text);
  if (!match) return undefined;
  const bytes = Math.floor(Number(match[1]) * UNITS[match[2]!.toUpperCase()]!);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** Bytes as the limits are said: `2G`, `512M`, else a number of bytes. */
export function formatBytes(bytes: number): string {
  for (const unit of ["T", "G", "M", "K"]) if (bytes % UNITS[unit]! === 0) return `${bytes / UNITS[unit]!}${unit}`;
  return String(bytes);
}

/** Checks a `limits` value; every problem goes to `problems`. `partial` (the environment's form) names variables. */
export function normalizeLimits(value: unknown, where: string, problems: string[], partial = false): LimitsSettings {
  const fields = mapping(value, where, FIELDS, problems);
  const out: LimitsSettings = {};
  for (const [rawKey, key, item] of fields) {
    const variable = LIMITS_ENV[key as keyof typeof LIMITS_ENV];
    const at = partial ? `environment variable ${variable}` : `${where}: ${rawKey}`;
    const number = numeric(item);
    if (key === "memory" || key === "cpu" || key === "tasks") Object.assign(out, capacity(key, item, at, problems));
    else if (key === "nice") {
      if (typeof number === "number" && Number.isInteger(number) && number >= 0 && number <= 19) out.nice = number;
      else problems.push(`${at}: expected a niceness from 0 to 19, got ${show(item)}`);
    } else if (key === "ioNice") {
      const text = typeof item === "string" ? item.trim() : "";
      if (/^(idle|best-effort(:[0-7])?)$/.test(text)) out.ioNice = text;
      else problems.push(`${at}: expected idle, best-effort or best-effort:0 to best-effort:7, got ${show(item)}`);
    } else if (key === "leftovers") {
      const text = typeof item === "string" ? item.trim() : "";
      if ((LEFTOVERS as readonly string[]).includes(text)) out.leftovers = text as (typeof LEFTOVERS)[number];
      else problems.push(`${at}: expected kill, keep or move-out, got ${show(item)}`);
    } else out.kept = normalizeKept(partial && typeof item === "string" ? pairs(item) : item, at, problems);
  }
  return out;
}

/** The `kept` mapping: memory, cpu and tasks only (the kept group is for the app, not for a script's priority). */
function normalizeKept(value: unknown, where: string, problems: string[]): NonNullable<LimitsSettings["kept"]> {
  const out: NonNullable<LimitsSettings["kept"]> = {};
  for (const [rawKey, key, item] of mapping(value, where, KEPT_FIELDS, problems))
    Object.assign(out, capacity(key as (typeof KEPT_FIELDS)[number], item, `${where}: ${rawKey}`, problems));
  return out;
}

/** One of `memory`, `cpu`, `tasks` checked; `{}` with a problem when it is wrong. */
function capacity(key: "memory" | "cpu" | "tasks", item: unknown, at: string, problems: string[]) {
  const number = numeric(item);
  if (key === "memory") {
    const bytes = parseBytes(item);
    if (bytes !== undefined && bytes >= MIN_MEMORY) return { memory: bytes };
    problems.push(`${at}: expected a size of at least 4M (like 512M or 2G), got ${show(item)}`);
  } else if (key === "cpu") {
    if (typeof number === "number" && number >= 0.01 && number <= 1024) return { cpu: number };
    problems.push(`${at}: expected a number of CPUs (like 1.5), at least 0.01, got ${show(item)}`);
  } else {
    if (typeof number === "number" && Number.isSafeInteger(number) && number >= 1) return { tasks: number };
    problems.push(`${at}: expected a whole number of processes and threads, at least 1, got ${show(item)}`);
  }
  return {};
}

/** The set fields of a mapping as `[as written, camelCase, value]`; unknown keys and a value that is none are said. */
function mapping(value: unknown, where: string, allowed: readonly string[], problems: string[]) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    problems.push(
      `${where}: expected a mapping (${allowed.join(", ")}), got ${Array.isArray(value) ? "a list" : show(value)}`,
    );
    return [];
  }
  const out: [string, string, unknown][] = [];
  for (const [rawKey, item] of Object.entries(value)) {
    const key = toCamel(rawKey);
    if (!allowed.includes(key)) problems.push(`${where}: unknown key "${rawKey}" (allowed: ${allowed.join(", ")})`);
    else if (item !== null && item !== undefined) out.push([rawKey, key, item]);
  }
  return out;
}

const numeric = (item: unknown) => (typeof item === "string" && /^\s*\d+(\.\d+)?\s*$/.test(item) ? Number(item) : item);

/** `memory=1G,tasks=4096` (the environment's form of a mapping) as one. */
function pairs(text: string): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [key, item] = part.split("=");
    if (!key || item === undefined) return text;
    out[key.trim()] = item.trim();
  }
  return out;
}
