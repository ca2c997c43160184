/**
 * What is live, in place (docs/deploy-control.md "What is live"): the commit of the app's newest deploy that ended
 * ok, or that a rollback returned to. A deploy that failed leaves the commit live before it, whatever it left
 * checked out. With releases, what is live is the release `current` names instead (releases/files.ts).
 */
import { type Env, headCommit } from "../system/git.ts";
import type { CommitInfo } from "../types.ts";
import type { HistoryEntry } from "./entry.ts";
import { newestDeploys, oldestDeploys, readDeployRecord } from "./read.ts";

/** Whether `entry` is a deploy of `app` (a name; undefined in single-app mode, where every deploy is the app's). */
export const ofApp = (entry: HistoryEntry, app: string | undefined) => app === undefined || entry.app === app;

/** Whether the deploy left its commit live: it ended ok, or rolled back (the commit it returned to is live). */
export const leftLive = (entry: HistoryEntry) =>
  entry.status === "done" && (entry.ok === true || entry.rolledBack) && entry.commit !== null;

/**
 * The tag a deploy that left its commit live deployed (its target's tag: `--ref v1.4.2`, a tag push); undefined
 * when it named none, or was rolled back (what is live is then an earlier deploy's commit).
 */
export function tagOf(entry: HistoryEntry): string | undefined {
  if (entry.rolledBack) return undefined;
  const target = (readDeployRecord(entry.jsonPath)?.result as { target?: { tag?: unknown } } | undefined)?.target;
  if (typeof target?.tag === "string") return target.tag;
  return entry.ref?.startsWith("refs/tags/") ? entry.ref.slice(10) : undefined;
}

/**
 * The live commit of `app` from the logs of `cwd`, reading records only as far back as it takes; before any deploy
 * left a commit live, the one checked out before the first deploy (beforeFirstDeploy); null with no deploy on record.
 */
export function liveCommitOf(cwd: string, app: string | undefined): CommitInfo | null {
  const live = newestDeploys(cwd, 1, (entry) => ofApp(entry, app) && leftLive(entry))[0]?.commit;
  if (live) return live;
  // The oldest records first, as far as the first that found a commit checked out.
  const [first] = oldestDeploys(cwd, 1, (entry) => ofApp(entry, app) && previousOf(entry) !== undefined);
  return (first && previousOf(first)) ?? null;
}

/** The commit a deploy found checked out before it began (its record's `previousCommit`); undefined when none. */
function previousOf(entry: HistoryEntry): CommitInfo | undefined {
  const previous = (readDeployRecord(entry.jsonPath)?.result as { previousCommit?: CommitInfo | null } | undefined)
    ?.previousCommit;
  return previous && typeof previous.sha === "string" ? previous : undefined;
}

/**
 * In place, what was live before a deploy that pulled nothing (docs/deploy-control.md "What is live"): what the
 * history says, else what the clone has checked out.
 */
export async function liveOrCheckedOut(
  cwd: string,
  app: string | undefined,
  repoPath: string,
  env: Env,
): Promise<string | null> {
  return liveCommitOf(cwd, app)?.sha ?? (await headCommit(repoPath, env).catch(() => null));
}

/**
 * What was live before any deploy of the app left a commit live: the commit its first deploy on record found checked
 * out (that record's `previousCommit`), not what a failed deploy left checked out since. `entries` are the app's,
 * newest first; undefined when none has such a commit.
 */
export function beforeFirstDeploy(entries: HistoryEntry[]): { commit: CommitInfo; deployId: string } | undefined {
  for (const entry of [...entries].reverse()) {
    const previous = previousOf(entry);
    if (previous) return { commit: previous, deployId: entry.id };
  }
  return undefined;
}
