import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { LOG_DIR, type DeployRecord } from "./deploy/log.ts";

/** One deploy as the history shows it, read from its JSON log (or from its file name when that is corrupt). */
export interface HistoryEntry {
  id: string;
  /** ISO start time. */
  startedAt: string;
  status: DeployRecord["status"] | "corrupt";
  app: string | null;
  trigger: string | null;
  durationMs: number | null;
  ok: boolean | null;
  exitCode: number | null;
  rolledBack: boolean;
  jsonPath: string;
  logPath: string;
  /** Why the JSON file could not be read (a crash mid-write, an edit by hand). */
  problem?: string;
}

const STEM = /^(\d{4}-\d{2}-\d{2})_(\d{2})-(\d{2})-(\d{2})Z_([0-9a-f-]{36})\.json$/;

export function logDir(cwd: string): string {
  return resolve(cwd, LOG_DIR);
}

function entryOf(dir: string, name: string): HistoryEntry | undefined {
  const match = STEM.exec(name);
  if (!match) return undefined;
  const [, date, hh, mm, ss, id] = match;
  const jsonPath = join(dir, name);
  const base: HistoryEntry = {
    id: id!,
    startedAt: `${date}T${hh}:${mm}:${ss}Z`,
    status: "corrupt",
    app: null,
    trigger: null,
    durationMs: null,
    ok: null,
    exitCode: null,
    rolledBack: false,
    jsonPath,
    logPath: jsonPath.replace(/\.json$/, ".log"),
  };
  let record: DeployRecord & { app?: string };
  try {
    record = JSON.parse(readFileSync(jsonPath, "utf8"));
    if (!record || typeof record !== "object" || typeof record.status !== "string") throw new Error("not a deploy record");
  } catch (error) {
    return { ...base, problem: `unreadable JSON log: ${(error as Error).message.split("\n")[0]}` };
  }
  const result = record.result;
  return {
    ...base,
    startedAt: record.startedAt ?? base.startedAt,
    status: record.status,
    app: record.app ?? null,
    trigger: record.trigger ?? null,
    durationMs: record.durationMs ?? null,
    ok: result ? result.ok : null,
    exitCode: result ? (result.rollback ? result.rollback.exitCode : result.run.exitCode) : null,
    rolledBack: Boolean(result?.rollback),
  };
}

/** Every deploy in `.service/logs/`, newest first. Never throws on a bad file: it is listed as corrupt. */
export function listDeploys(cwd: string): HistoryEntry[] {
  const dir = logDir(cwd);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => name.endsWith(".json"))
    .sort()
    .reverse()
    .map((name) => entryOf(dir, name))
    .filter((entry): entry is HistoryEntry => entry !== undefined);
}

/** The deploy named by a full id, an id prefix, or `last`; an error message when none or several match. */
export function findDeploy(cwd: string, ref: string): HistoryEntry | string {
  const all = listDeploys(cwd);
  if (ref === "last") return all[0] ?? `no deploys in ${logDir(cwd)} yet`;
  const needle = ref.toLowerCase();
  const matches = all.filter((entry) => entry.id.startsWith(needle));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) return `no deploy with id "${ref}" in ${logDir(cwd)}`;
  return `"${ref}" matches ${matches.length} deploys (${matches.slice(0, 5).map((m) => m.id.slice(0, 12)).join(", ")}…): give more of the id`;
}
