/**
 * What a token that is not admin is not told (docs/admin.md "Tokens"): the directories of the server. An app's
 * repository, its releases' directories and a deploy's log files are named to an admin only; the rest of each
 * answer is the same.
 */
import type { HistoryEntry } from "../history/read.ts";
import type { KeptRelease, ReleasesView } from "../releases/files.ts";

const release = ({ path: _, ...kept }: KeptRelease) => kept;

/** An app's releases without their directories. */
export function releasesUntold(view: ReleasesView | null) {
  return view && { keep: view.keep, live: view.live && release(view.live), kept: view.kept.map(release) };
}

/** A history entry without the paths of its two files. */
export function entryUntold({ jsonPath: _json, logPath: _log, ...entry }: HistoryEntry) {
  return entry;
}
