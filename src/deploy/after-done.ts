/**
 * The work of a deploy after its `[done]` line (docs/log-files.md "Lead time in the record", docs/releases.md step 7):
 * the lead time's git call and the pruning of old releases amend the record; retention prunes the logs; git's
 * automatic maintenance runs. Nothing of it reaches the stream or the `.log`; a process that exits waits for all of
 * it (`retentionDone`). Never throws.
 */
import type { DeployResult } from "../types.ts";
import { amendRecord } from "../history/record.ts";
import { leadComing, leadOf } from "../history/lead.ts";
import { type Env, gitAutoMaintenance } from "../system/git.ts";
import type { Logger } from "../system/logger.ts";

/** What the process's ended deploys still do. */
const pending = new Set<Promise<void>>();

/** Tracks `work` until it settles: `retentionDone` waits for it. */
export function track(work: Promise<void>): Promise<void> {
  pending.add(work);
  return work.finally(() => pending.delete(work));
}

/** Settles once the work of every deploy that ended so far is over: a process that exits waits for it. */
export async function retentionDone(): Promise<void> {
  while (pending.size > 0) await Promise.all([...pending]);
}

/**
 * The pruning of old releases: the service's logger says what was removed, and the record's `result.release.pruned`
 * (so `result` too) names it once it is over.
 */
export function pruneAfterDone(
  result: DeployResult,
  prune: () => Promise<{ pruned: string[]; keep: number }>,
  logger: Logger,
  who: string,
): Promise<void> {
  const work = prune().then(
    ({ pruned, keep }) => {
      if (pruned.length === 0) return;
      const what = `release${pruned.length > 1 ? "s" : ""} ${pruned.join(", ")}`;
      logger.info(`${who}: pruned ${what} (keep ${keep})`);
      if (!result.release) return;
      result.release.pruned = pruned;
      amendRecord(result.log.json, (record) => {
        if (record.result && "release" in record.result && record.result.release) record.result.release.pruned = pruned;
      });
    },
    (error: Error) => logger.warn(`${who}: pruning old releases failed: ${error.message}`),
  );
  return track(work);
}

/**
 * The lead time (history/lead.ts): one git call neither the `[done]` line nor the end of the answer waits for.
 * `result.lead` and the record's are set once it is known; until then the record is marked as one whose lead is
 * coming (a reading of the DORA figures does not keep it as ended).
 */
export function leadAfterDone(result: DeployResult, dates: () => Promise<number[]>): Promise<void> {
  const file = result.log.json;
  leadComing.add(file);
  const work = dates()
    .then((read) => {
      const lead = leadOf(read, Date.parse(result.finishedAt));
      if (!lead) return;
      result.lead = lead;
      amendRecord(file, (record) => {
        if (record.result && "log" in record.result) record.result.lead = lead;
      });
    })
    .catch(() => {})
    .finally(() => leadComing.delete(file));
  return track(work);
}

/** When each clone's automatic maintenance last ran, by repoPath. */
const maintained = new Map<string, number>();

/** A clone whose pull brought nothing has nothing new to pack: its maintenance waits this long at most. */
export const MAINTAIN_EVERY_MS = 60 * 60 * 1000;

/**
 * git's automatic maintenance, which the deploy's `git pull` left out (system/git.ts `gitPull`): after the `[done]`
 * line and outside the deploy's turn in the queue, as git's own detached gc runs beside the commands that follow it;
 * after a pull that moved HEAD, otherwise at most once every MAINTAIN_EVERY_MS per clone.
 */
export function maintainAfterDone(
  repoPath: string,
  env: Env,
  pulled: { before: string | null; after: string | null },
): void {
  const now = Date.now();
  const last = maintained.get(repoPath);
  if (pulled.before === pulled.after && last !== undefined && now - last < MAINTAIN_EVERY_MS) return;
  maintained.set(repoPath, now);
  void track(gitAutoMaintenance(repoPath, env).catch(() => {}));
}
