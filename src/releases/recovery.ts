/**
 * What a crash leaves in a releases directory (docs/releases.md "Crashes"), found and cleaned up at the start of
 * the service and of each deploy with releases; and the mark of an activate script running, which tells a crash
 * between the switch and the end of that script.
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { readNoFollow, writeFileAtomic } from "../system/files.ts";
import { OWN_START, processAlive } from "../system/liveness.ts";
import { isDirectory, liveReleaseId, RELEASE_ID, readMeta, type ReleaseLayout } from "./files.ts";
import { pruneWorktrees, removeFiles } from "./prune.ts";

type Env = Record<string, string | undefined>;

/**
 * What a crash left (kill -9, a power cut): a release half-prepared or half-removed by a process that is gone,
 * a `current` link made but not renamed into place, an activate script that never finished. Cleans up and
 * returns one sentence per thing done or found, for the deploy's stream or the start's log.
 */
export async function recoverReleases(layout: ReleaseLayout, repoPath: string, env: Env): Promise<string[]> {
  const said: string[] = [];
  const live = liveReleaseId(layout);
  for (const name of safeList(layout.root)) {
    const pid = /^current\.(\d+)\.[0-9a-f]{16}\.tmp$/.exec(name)?.[1];
    if (pid === undefined || processAlive(Number(pid))) continue;
    rmSync(join(layout.root, name), { force: true });
    said.push(`removed ${join(layout.root, name)}, a link to switch to that an interrupted deploy never renamed`);
  }
  let removed = 0;
  for (const name of safeList(layout.releases)) {
    const id = name.replace(/\.json$/, "");
    if (!name.endsWith(".json") || !RELEASE_ID.test(id) || id === live) continue;
    const meta = readMeta(layout, id);
    if (!meta || meta.state === "complete" || processAlive(meta.pid, meta.pidStart)) continue;
    await removeFiles(layout, id);
    removed++;
    said.push(
      meta.state === "preparing"
        ? `removed release ${id}: deploy ${meta.deployId} was interrupted while preparing or building it`
        : `removed the rest of release ${id}, whose removal was interrupted`,
    );
  }
  if (removed > 0) await pruneWorktrees(repoPath, env);
  said.push(...activationLeftover(layout, live));
  if (live !== null && !isDirectory(join(layout.releases, live)))
    said.push(`${layout.current} names release ${live}, which does not exist: deploy or roll back to make one live`);
  return said;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The mark of an activate script running: written before the switch, removed when the script ended. */
const activatingFile = (layout: ReleaseLayout) => join(layout.root, ".activating.json");

export function markActivating(layout: ReleaseLayout, id: string, deployId: string): void {
  const mark = { id, deployId, pid: process.pid, pidStart: OWN_START, since: new Date().toISOString() };
  try {
    writeFileAtomic(activatingFile(layout), `${JSON.stringify(mark)}\n`, 0o644);
  } catch {}
}

export function unmarkActivating(layout: ReleaseLayout): void {
  rmSync(activatingFile(layout), { force: true });
}

/** An activation a dead process began: said, and its mark removed. */
function activationLeftover(layout: ReleaseLayout, live: string | null): string[] {
  let mark: { id?: string; deployId?: string; pid?: number; pidStart?: string };
  try {
    mark = JSON.parse(readNoFollow(activatingFile(layout)));
  } catch {
    return [];
  }
  if (typeof mark.pid === "number" && processAlive(mark.pid, mark.pidStart)) return [];
  unmarkActivating(layout);
  return [
    `deploy ${mark.deployId} was interrupted between the switch to release ${mark.id} and the end of its activate script: ` +
      `current names ${live ?? "no release"} (complete), whose activate script may not have run: deploy again, or run it by hand`,
  ];
}
