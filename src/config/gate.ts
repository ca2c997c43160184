/** Wait for the forge's checks on the commit before deploying it (key `gate`, top level or per app). */
import { show } from "./show.ts";
export interface GateSettings {
  /** Statuses and check runs that must be success: names, globs (`*`), or `{ name, by }` pinned to a reporter. */
  checks: (string | { name: string; by: string })[];
  /** How long a deploy waits while a required check is pending or missing. @default 1800000 */
  waitMs: number;
  /** How long after the last of them turned success. @default 0 */
  bakeMs: number;
}
/**
 * The checks of the `gate` key (docs/configuration.md "gate") as a user writes it, in a file or the environment,
 * and its defaults. What the gate does is gate/stage.ts.
 */

/** How long a deploy waits while a required check is pending or missing. */
export const DEFAULT_GATE_WAIT_MS = 1_800_000;

/** The variables of the key's fields: the checks turn the gate on, the others change the gate in force. */
export const GATE_ENV = {
  checks: "SERVICE_GATE_CHECKS",
  waitMs: "SERVICE_GATE_WAIT_MS",
  bakeMs: "SERVICE_GATE_BAKE_MS",
} as const;

const FIELDS = ["checks", "waitMs", "bakeMs"];
const MAX_MS = 2 ** 31 - 1;

const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * Checks a `gate` value; every problem goes to `problems`. `partial` (the environment's form): the checks may be
 * missing, the fields set change the gate of the file.
 */
export function normalizeGate(
  value: unknown,
  where: string,
  problems: string[],
  partial = false,
): Partial<GateSettings> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    problems.push(
      `${where}: expected a mapping (checks, waitMs, bakeMs), got ${Array.isArray(value) ? "a list" : show(value)}`,
    );
    return {};
  }
  const out: Partial<GateSettings> = {};
  for (const [rawKey, item] of Object.entries(value)) {
    const key = toCamel(rawKey);
    const variable = GATE_ENV[key as keyof typeof GATE_ENV];
    const at = partial && variable ? `environment variable ${variable}` : `${where}: ${rawKey}`;
    if (!FIELDS.includes(key)) {
      problems.push(`${where}: unknown key "${rawKey}" (allowed: ${FIELDS.join(", ")})`);
      continue;
    }
    if (item === null || item === undefined) continue;
    if (key === "checks") {
      const checks = checkList(item, at, problems);
      if (checks) out.checks = checks;
    } else {
      const n = typeof item === "string" && /^\s*\d+\s*$/.test(item) ? Number(item) : item;
      const least = key === "waitMs" ? 1 : 0;
      if (typeof n === "number" && Number.isSafeInteger(n) && n >= least && n <= MAX_MS)
        out[key as "waitMs" | "bakeMs"] = n;
      else
        problems.push(
          `${at}: expected a whole number of milliseconds${least ? " above 0" : ""}, at most ${MAX_MS}, got ${show(item)}`,
        );
    }
  }
  if (!partial && out.checks === undefined && !problems.some((p) => p.startsWith(where)))
    problems.push(`${where}: "checks" is required (the statuses and check runs that must be success, like [ci/build])`);
  return out;
}

/** Names (globs) or `{ name, by }`; the environment's form is one comma-separated string of names. */
function checkList(value: unknown, where: string, problems: string[]): GateSettings["checks"] | undefined {
  const items = typeof value === "string" ? value.split(",").map((item) => item.trim()) : value;
  const expected = `expected a list of check names (globs with *), each a name or { name, by }, got ${show(value)}`;
  if (!Array.isArray(items) || items.length === 0) {
    problems.push(`${where}: ${expected}`);
    return undefined;
  }
  const out: GateSettings["checks"] = [];
  for (const item of items) {
    if (typeof item === "string" && item.trim() !== "") out.push(item.trim());
    else if (item && typeof item === "object" && !Array.isArray(item)) {
      const { name, by, ...rest } = item as Record<string, unknown>;
      const unknown = Object.keys(rest);
      if (unknown.length > 0) problems.push(`${where}: unknown key "${unknown[0]}" in a check (allowed: name, by)`);
      else if (typeof name !== "string" || name.trim() === "")
        problems.push(
          `${where}: a check written as a mapping needs "name" (like { name: deploy/web-1, by: deploy-bot })`,
        );
      else if (by !== undefined && (typeof by !== "string" || by.trim() === ""))
        problems.push(`${where}: "by" of ${name} must be a login or an app's name, got ${show(by)}`);
      else out.push(by === undefined ? name.trim() : { name: name.trim(), by: by.trim() });
    } else {
      problems.push(`${where}: ${expected}`);
      return undefined;
    }
  }
  return out;
}

/** The gate with its defaults. */
export function resolveGate(gate: Partial<GateSettings> & Pick<GateSettings, "checks">): GateSettings {
  return { checks: gate.checks, waitMs: gate.waitMs ?? DEFAULT_GATE_WAIT_MS, bakeMs: gate.bakeMs ?? 0 };
}

const seconds = (ms: number) => `${ms % 1000 === 0 ? ms / 1000 : (ms / 1000).toFixed(1)} s`;

/** The gate in words (`service check`, the start banner): the checks (with who must report them), the wait and the bake. */
export function describeGate(gate: GateSettings | undefined): string {
  if (!gate) return "none";
  const checks = gate.checks.map((check) => (typeof check === "string" ? check : `${check.name} (by ${check.by})`));
  const bake = gate.bakeMs > 0 ? `, then bake ${seconds(gate.bakeMs)}` : "";
  return `${checks.join(", ")} success (wait up to ${seconds(gate.waitMs)}${bake})`;
}
