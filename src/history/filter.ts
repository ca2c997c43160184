import { outcomeOf } from "./record.ts";
import { isFailed, type HistoryEntry } from "./read.ts";

/**
 * The filters of the deploy history, the same for `service logs` and the admin API (`GET /api/deploys`, the
 * dashboard's history page): by app, outcome and start time. Pure: the caller parses its input once.
 */
export interface HistoryFilter {
  /** Only this app's deploys; `default` is the single app's (its records name no app). */
  app?: string;
  /** Only deploys with one of these outcomes. */
  outcomes?: EntryOutcome[];
  /** Only deploys that started at or after this time (ms since the epoch). */
  since?: number;
  /** Only deploys that did not succeed (`--failed`). */
  failed?: boolean;
}

/** A deploy's outcome in the history: how it ended, or where it is. */
export const OUTCOMES = [
  "ok",
  "failed",
  "rolled_back",
  "cancelled",
  "refused",
  "superseded",
  "running",
  "interrupted",
  "corrupt",
] as const;
export type EntryOutcome = (typeof OUTCOMES)[number];

/** The outcome of an entry: its status unless it is done, else ok, failed or rolled_back. */
export function entryOutcome(entry: HistoryEntry): string {
  if (entry.status !== "done") return entry.status;
  return outcomeOf({ ok: entry.ok === true, rolledBack: entry.rolledBack });
}

/** The entries `filter` keeps, in their order. */
export function filterHistory(entries: HistoryEntry[], filter: HistoryFilter): HistoryEntry[] {
  return entries.filter(keeps(filter));
}

/** Whether `filter` keeps an entry. */
export function keeps(filter: HistoryFilter): (entry: HistoryEntry) => boolean {
  const { app, outcomes, since, failed } = filter;
  return (entry) =>
    (app === undefined || (entry.app ?? "default") === app) &&
    (outcomes === undefined || (outcomes as string[]).includes(entryOutcome(entry))) &&
    (since === undefined || (Date.parse(entry.startedAt) || 0) >= since) &&
    (!failed || isFailed(entry));
}

/**
 * `ok,rolled_back` → the outcomes named (`rolled-back` is accepted for `rolled_back`). Throws what is expected,
 * for the caller to prefix with the option's name.
 */
export function parseOutcomes(text: string): EntryOutcome[] {
  const names = text
    .split(",")
    .map((name) => name.trim().toLowerCase().replace(/-/g, "_"))
    .filter(Boolean);
  const unknown = names.find((name) => !(OUTCOMES as readonly string[]).includes(name));
  if (names.length === 0 || unknown !== undefined)
    throw new Error(
      `expects one or more of ${OUTCOMES.join(", ")} (comma-separated), got ${JSON.stringify(text.slice(0, 40))}`,
    );
  return names as EntryOutcome[];
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * A `since` value as a time (ms since the epoch): a duration back from `now` (`30m`, `2h`, `7d`, `1w`), or an
 * ISO date or time (`2026-05-01`, `2026-05-01T10:00`: UTC unless a zone is given). Throws what is expected, for
 * the caller to prefix with the option's name.
 */
export function parseSince(text: string, now = Date.now()): number {
  const trimmed = text.trim();
  const duration = /^(\d{1,9})\s*([smhdw])$/i.exec(trimmed);
  if (duration) return now - Number(duration[1]) * UNIT_MS[duration[2]!.toLowerCase()]!;
  const date = /^\d{4}-\d{2}-\d{2}(?:[T ]([\d:.]+)(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(trimmed);
  if (date) {
    // As the history shows start times: in UTC, unless a zone is given.
    const time = Date.parse(date[1] && !date[2] ? `${trimmed.replace(" ", "T")}Z` : trimmed.replace(" ", "T"));
    if (!Number.isNaN(time)) return time;
  }
  throw new Error(
    `expects a duration back from now (30m, 2h, 7d, 1w) or a date or time (2026-05-01, 2026-05-01T10:00Z), got ${JSON.stringify(trimmed.slice(0, 40))}`,
  );
}

/**
 * A filter from its text values: `service logs`'s options, or the API's query parameters. An empty value sets
 * nothing. Throws one line for a bad value, naming the option with `prefix` before it ("--" for the CLI).
 */
export function parseFilter(
  values: { app?: string; outcome?: string; since?: string; failed?: boolean },
  prefix = "",
  now = Date.now(),
): HistoryFilter {
  const option = <T>(name: string, parse: () => T): T => {
    try {
      return parse();
    } catch (error) {
      throw new Error(`${prefix}${name} ${(error as Error).message}`);
    }
  };
  const { app, outcome, since, failed } = values;
  return {
    ...(app ? { app } : {}),
    ...(outcome ? { outcomes: option("outcome", () => parseOutcomes(outcome)) } : {}),
    ...(since ? { since: option("since", () => parseSince(since, now)) } : {}),
    ...(failed ? { failed: true } : {}),
  };
}
