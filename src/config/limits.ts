/**
 * The checks of the `limits` key (docs/configuration.md "limits") as a user writes it, in a file or the
 * environment. What the limits do is system/limits.ts.
 */
import type { LimitsSettings } from "./schema.ts";

/** The variables of the key's fields. */
export const LIMITS_ENV = {
  memory: "SERVICE_LIMITS_MEMORY",
  cpu: "SERVICE_LIMITS_CPU",
  tasks: "SERVICE_LIMITS_TASKS",
  nice: "SERVICE_LIMITS_NICE",
  ioNice: "SERVICE_LIMITS_IONICE",
} as const;

const FIELDS = Object.keys(LIMITS_ENV);
/** The least memory a limit may give: below it not even a shell starts. */
const MIN_MEMORY = 4 * 1024 * 1024;
const UNITS: Record<string, number> = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const show = (value: unknown) => (typeof value === "string" ? JSON.stringify(value) : String(value));

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
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    problems.push(
      `${where}: expected a mapping (${FIELDS.join(", ")}), got ${Array.isArray(value) ? "a list" : show(value)}`,
    );
    return {};
  }
  const out: LimitsSettings = {};
  for (const [rawKey, item] of Object.entries(value)) {
    const key = toCamel(rawKey);
    const variable = LIMITS_ENV[key as keyof typeof LIMITS_ENV];
    const at = partial && variable ? `environment variable ${variable}` : `${where}: ${rawKey}`;
    if (!variable) {
      problems.push(`${where}: unknown key "${rawKey}" (allowed: ${FIELDS.join(", ")})`);
      continue;
    }
    if (item === null || item === undefined) continue;
    const number = typeof item === "string" && /^\s*\d+(\.\d+)?\s*$/.test(item) ? Number(item) : item;
    if (key === "memory") {
      const bytes = parseBytes(item);
      if (bytes !== undefined && bytes >= MIN_MEMORY) out.memory = bytes;
      else problems.push(`${at}: expected a size of at least 4M (like 512M or 2G), got ${show(item)}`);
    } else if (key === "cpu") {
      if (typeof number === "number" && number >= 0.01 && number <= 1024) out.cpu = number;
      else problems.push(`${at}: expected a number of CPUs (like 1.5), at least 0.01, got ${show(item)}`);
    } else if (key === "tasks") {
      if (typeof number === "number" && Number.isSafeInteger(number) && number >= 1) out.tasks = number;
      else problems.push(`${at}: expected a whole number of processes and threads, at least 1, got ${show(item)}`);
    } else if (key === "nice") {
      if (typeof number === "number" && Number.isInteger(number) && number >= 0 && number <= 19) out.nice = number;
      else problems.push(`${at}: expected a niceness from 0 to 19, got ${show(item)}`);
    } else {
      const text = typeof item === "string" ? item.trim() : "";
      if (/^(idle|best-effort(:[0-7])?)$/.test(text)) out.ioNice = text;
      else problems.push(`${at}: expected idle, best-effort or best-effort:0 to best-effort:7, got ${show(item)}`);
    }
  }
  return out;
}
