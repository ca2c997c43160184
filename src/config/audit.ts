/**
 * The `audit` key (docs/audit.md) and `adminMcp` (docs/agents.md) as a user writes them, their defaults, and the
 * names of the keys a reload changed (the audit says which keys, never their values).
 */
import { show } from "./show.ts";

/** How long the audit trail is kept (key `audit`). */
export interface AuditSettings {
  /** Days a month's file is kept after the month ended; 0: kept for ever. @default 365 */
  keepDays: number;
}

export const DEFAULT_AUDIT_KEEP_DAYS = 365;

/** The variables of the key's fields. */
export const AUDIT_ENV = { keepDays: "SERVICE_AUDIT_KEEP_DAYS" } as const;

/** What the MCP endpoint offers agents (`adminMcp`): the read tools, or those and the deploy actions. */
export const MCP_MODES = ["read", "write"] as const;
export type McpMode = (typeof MCP_MODES)[number];

/** Checks an `audit` value; every problem goes to `problems`. */
export function normalizeAudit(value: unknown, where: string, problems: string[]): AuditSettings {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    problems.push(`${where}: expected a mapping (keepDays), got ${Array.isArray(value) ? "a list" : show(value)}`);
    return { keepDays: DEFAULT_AUDIT_KEEP_DAYS };
  }
  const out: AuditSettings = { keepDays: DEFAULT_AUDIT_KEEP_DAYS };
  for (const [rawKey, item] of Object.entries(value)) {
    const key = rawKey.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
    if (key !== "keepDays") {
      problems.push(`${where}: unknown key "${rawKey}" (allowed: keepDays)`);
      continue;
    }
    const n = typeof item === "string" && /^\s*\d+\s*$/.test(item) ? Number(item) : item;
    if (typeof n === "number" && Number.isSafeInteger(n) && n >= 0 && n <= 100_000) out.keepDays = n;
    else problems.push(`${where}: keepDays: expected a whole number of days (0: for ever), got ${show(item)}`);
  }
  return out;
}

/** Checks an `adminMcp` value: `read` or `write`. Throws what is expected. */
export function normalizeMcp(value: unknown): McpMode {
  const text = typeof value === "string" ? value.trim().toLowerCase() : value;
  if (MCP_MODES.includes(text as McpMode)) return text as McpMode;
  throw new Error(`expected "read" (the read tools) or "write" (also deploy, rollback, cancel, pause, resume)`);
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The keys that differ between two file configurations: top-level names, and `apps.<name>.<key>` inside an app
 * (`apps.<name>` for an app added or removed). Names only: a value may be a secret.
 */
export function changedKeys(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  const out: string[] = [];
  for (const key of [...keys].sort()) {
    if (same(before[key], after[key])) continue;
    if (key !== "apps" || !Array.isArray(before[key]) || !Array.isArray(after[key])) {
      out.push(key);
      continue;
    }
    const byName = (list: unknown[]) =>
      new Map(
        list.map((app, i) => {
          const entry = (app && typeof app === "object" ? app : {}) as Record<string, unknown>;
          return [typeof entry.name === "string" ? entry.name : `#${i + 1}`, entry] as const;
        }),
      );
    const old = byName(before[key] as unknown[]);
    const now = byName(after[key] as unknown[]);
    for (const name of new Set([...old.keys(), ...now.keys()])) {
      const a = old.get(name);
      const b = now.get(name);
      if (!a || !b) out.push(`apps.${name}`);
      else for (const inner of changedKeys(a, b)) out.push(`apps.${name}.${inner}`);
    }
  }
  return out;
}

/** `service check`'s value of `audit`. */
export function describeAudit(value: AuditSettings | undefined): string {
  const days = value?.keepDays ?? DEFAULT_AUDIT_KEEP_DAYS;
  return days === 0 ? "keep every month" : `keep a month's file ${days} days after it ends`;
}
