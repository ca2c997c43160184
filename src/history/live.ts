/**
 * What is live, in place (docs/deploy-control.md "What is live"): the commit of the app's newest deploy that ended
 * ok, or that a rollback returned to. A deploy that failed leaves the commit live before it, whatever it left
 * checked out. With releases, what is live is the release `current` names instead (releases/files.ts).
 */
import type { CommitInfo } from "../types.ts";
import type { HistoryEntry } from "./entry.ts";
import { newestDeploys } from "./read.ts";

/** Whether `entry` is a deploy of `app` (a name; undefined in single-app mode, where every deploy is the app's). */
export const ofApp = (entry: HistoryEntry, app: string | undefined) => app === undefined || entry.app === app;

/** Whether the deploy left its commit live: it ended ok, or rolled back (the commit it returned to is live). */
export const leftLive = (entry: HistoryEntry) =>
  entry.status === "done" && (entry.ok === true || entry.rolledBack) && entry.commit !== null;

/** The live commit of `app` from the logs of `cwd`, reading records only as far back as it takes. */
export function liveCommitOf(cwd: string, app: string | undefined): CommitInfo | null {
  return newestDeploys(cwd, 1, (entry) => ofApp(entry, app) && leftLive(entry))[0]?.commit ?? null;
}
