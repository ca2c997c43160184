/**
 * The gate's verdict (docs/configuration.md "gate"): the checks each `gate.checks` entry requires among those the
 * forge reported (gate/forges.ts), and what they add up to; and the lines that say so. Pure: no I/O.
 */
import { shown } from "../system/shown.ts";
import type { GateCheck, GateEntry, GateVerdict, ReportedCheck } from "./types.ts";

const FAILED = new Set(["failure", "error", "cancelled"]);

/** A name, or a glob where `*` is any characters; everything else (regex metacharacters included) is literal. */
function matcher(pattern: string): (name: string) => boolean {
  if (!pattern.includes("*")) return (name) => name === pattern;
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&"))
    .join(".*");
  const regex = new RegExp(`^${source}$`, "s");
  return (name) => regex.test(name);
}

/** The reported checks one entry requires. `*` alone is every check but this server's own status. */
function required(entry: GateEntry, reported: ReportedCheck[], ownContext: string): ReportedCheck[] {
  const matches = entry.name === "*" ? (name: string) => name !== ownContext : matcher(entry.name);
  // A pinned entry wants its reporter: a check whose reporter the forge does not name is never it.
  return reported
    .filter((check) => matches(check.name) && (entry.by === undefined || check.by === entry.by))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The verdict on `reported` for `entries`: shut when a required check failed, errored or was cancelled; open when
 * every one succeeded; pending otherwise (one still running, or an entry nothing matched: missing). No entries is
 * open. `checks` lists the required checks in entry order, each once.
 */
export function gateVerdict(entries: GateEntry[], reported: ReportedCheck[], ownContext: string): GateVerdict {
  const listed = new Set<ReportedCheck>();
  const seen: ReportedCheck[] = [];
  const checks: GateCheck[] = [];
  // Two reporters' checks of one name are told apart by their reporter.
  const names = new Map<string, number>();
  for (const check of reported) names.set(check.name, (names.get(check.name) ?? 0) + 1);
  for (const entry of entries) {
    const matched = required(entry, reported, ownContext);
    if (matched.length === 0) {
      const missing: GateCheck = { name: entry.name, state: "missing", ...(entry.by ? { by: entry.by } : {}) };
      if (!checks.some((c) => c.state === "missing" && c.name === missing.name && c.by === missing.by))
        checks.push(missing);
      continue;
    }
    for (const check of matched) {
      if (listed.has(check)) continue;
      listed.add(check);
      seen.push(check);
      const by =
        check.by !== undefined && (entry.by !== undefined || names.get(check.name)! > 1) ? check.by : undefined;
      checks.push({
        name: check.name,
        state: check.state,
        ...(check.url ? { url: check.url } : {}),
        ...(by !== undefined ? { by } : {}),
      });
    }
  }
  const state = checks.some((c) => FAILED.has(c.state))
    ? "shut"
    : checks.every((c) => c.state === "success")
      ? "open"
      : "pending";
  const lastSuccessAt = state === "open" ? latest(seen) : undefined;
  return { state, checks, ...(lastSuccessAt ? { lastSuccessAt } : {}) };
}

/** The latest `updatedAt` in time (forges write offsets of their own), as the forge wrote it. */
function latest(checks: ReportedCheck[]): string | undefined {
  let best: { at: string; ms: number } | undefined;
  for (const { updatedAt } of checks) {
    const ms = updatedAt ? Date.parse(updatedAt) : Number.NaN;
    if (!Number.isNaN(ms) && (!best || ms > best.ms)) best = { at: updatedAt!, ms };
  }
  return best?.at;
}

// Names and links come from the forge: shown on one line, without the marks that would drive a terminal.
const label = (check: GateCheck) => shown(check.by ? `${check.name} by ${check.by}` : check.name);

/** `waiting for ci/build (pending), test (unit) (missing); 1 of 3 success` */
export function waitingText(verdict: GateVerdict): string {
  const waiting = verdict.checks.filter((c) => c.state !== "success");
  const successes = verdict.checks.length - waiting.length;
  const list = waiting.map((c) => `${label(c)} (${c.state})`).join(", ");
  return `waiting for ${list}; ${successes} of ${verdict.checks.length} success`;
}

/** `ci/build, test (unit), test (e2e) success` */
export function successText(verdict: GateVerdict): string {
  return `${verdict.checks.map(label).join(", ")} success`;
}

/** `test (unit) failure (https://ci.example/run/7)`: each failed, errored or cancelled check. */
export function shutText(verdict: GateVerdict): string {
  return verdict.checks
    .filter((c) => FAILED.has(c.state))
    .map((c) => `${label(c)} ${c.state}${c.url ? ` (${shown(c.url)})` : ""}`)
    .join(", ");
}
