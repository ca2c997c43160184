/**
 * The lead time of a deploy that changed what is live (docs/log-files.md "DORA figures"): the committer dates of
 * the commits between the commit live before and the new one, read with one git call after the deploy's `[done]`
 * line, and how long each waited until the deploy's end.
 */
import { gitQuery } from "../system/git.ts";
import type { LeadTime } from "../types.ts";

/**
 * The records (their JSON files) whose lead is still being read after their `[done]` line (deploy/run.ts): what a
 * reading of the DORA figures finds in them is not final yet.
 */
export const leadComing = new Set<string>();

/** Commits read at most: a deploy of a long history says the newest 1000. */
export const MAX_LEAD_COMMITS = 1000;

/**
 * The committer dates (seconds since the epoch) of the commits in `before..live`, newest first; empty when there
 * are none (a rollback to an older commit) or git cannot say. Never throws.
 */
export async function committerDates(
  repoPath: string,
  before: string | null,
  live: string | null,
  env: Record<string, string | undefined>,
): Promise<number[]> {
  if (!before || !live || before === live) return [];
  const hex = /^[0-9a-f]{40,64}$/;
  if (!hex.test(before) || !hex.test(live)) return [];
  try {
    const { code, stdout } = await gitQuery(
      repoPath,
      ["log", `--max-count=${MAX_LEAD_COMMITS}`, "--format=%ct", `${before}..${live}`],
      env,
    );
    if (code !== 0) return [];
    return stdout
      .split("\n")
      .map(Number)
      .filter((seconds) => Number.isFinite(seconds) && seconds > 0);
  } catch {
    return [];
  }
}

/** The lead of those commits at `endMs`, the deploy's end; undefined without a commit. */
export function leadOf(dates: number[], endMs: number): LeadTime | undefined {
  if (dates.length === 0) return undefined;
  const end = Math.round(endMs / 1000);
  const waits = dates.map((seconds) => Math.max(0, end - seconds)).sort((a, b) => a - b);
  const middle = Math.floor(waits.length / 2);
  const medianSeconds = waits.length % 2 ? waits[middle]! : Math.round((waits[middle - 1]! + waits[middle]!) / 2);
  return { commits: waits.length, medianSeconds, oldestSeconds: waits[waits.length - 1]! };
}
