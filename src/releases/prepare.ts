/**
 * Preparing a release (docs/releases.md): a git worktree of the commit, the shared paths linked in, marked complete
 * once built. Switching to it is switch.ts; removing and pruning, prune.ts; what a crash left, recovery.ts.
 */
import { lstatSync, mkdirSync, rmSync, statfsSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { OWN_START } from "../system/liveness.ts";
import { isDirectory, metaFile, newReleaseId, type ReleaseLayout, type ReleaseMeta, writeMeta } from "./files.ts";
import { releaseGit, removeRelease } from "./prune.ts";

type Env = Record<string, string | undefined>;
type Say = (text: string) => void;

export interface Prepared {
  id: string;
  dir: string;
  meta: ReleaseMeta;
}

/**
 * `releases/<id>`: the commit's tracked files and nothing else, as a worktree of the clone (its objects are
 * shared, nothing is copied; `git rev-parse HEAD` there gives the commit), then the shared paths. Returns the
 * release, or what went wrong (the half-made directory is removed then).
 */
export async function prepareRelease(
  layout: ReleaseLayout,
  shared: string[],
  what: { commit: string; deployId: string; app?: string; repoPath: string; env: Env },
  say: Say,
  onOutput: (stream: "stdout" | "stderr", data: Uint8Array) => void,
): Promise<Prepared | string> {
  const now = new Date();
  let meta: ReleaseMeta | undefined;
  try {
    mkdirSync(layout.releases, { recursive: true });
    const id = newReleaseId(layout, now, what.commit);
    meta = {
      id,
      commit: what.commit,
      deployId: what.deployId,
      ...(what.app ? { app: what.app } : {}),
      createdAt: now.toISOString(),
      state: "preparing",
      pid: process.pid,
      pidStart: OWN_START,
    };
    // First the record of it, so a crash from here on leaves something the next deploy knows to remove.
    writeMeta(layout, meta);
  } catch (error) {
    if (meta) rmSync(metaFile(layout, meta.id), { force: true });
    return `cannot start a release in ${layout.releases}: ${(error as Error).message}`;
  }
  const dir = join(layout.releases, meta.id);
  say(`preparing release ${meta.id} in ${dir}: git worktree add ${meta.commit.slice(0, 12)}`);
  const added = await releaseGit(
    what.repoPath,
    ["worktree", "add", "--detach", "--quiet", dir, meta.commit],
    what.env,
    onOutput,
  );
  let problem: string | undefined =
    added.exitCode === 0
      ? undefined
      : `git worktree add failed: ${added.error ?? (added.timedOut ? "timed out" : `exit code ${added.exitCode}`)}`;
  if (!problem) {
    try {
      linkShared(layout, dir, shared, say);
    } catch (error) {
      problem = `cannot link the shared paths: ${(error as Error).message}`;
    }
  }
  if (problem) {
    const full = fullDisk(dir);
    if (full) problem += ` (${full})`;
    await removeRelease(layout, meta.id, what.repoPath, what.env);
    return `${problem}; removed release ${meta.id}`;
  }
  return { id: meta.id, dir, meta };
}

/**
 * Links each shared entry from `<path>/shared/` (made on first use: a name ending in `/` is a directory, else an
 * empty file). A tracked file or directory at that path is replaced by the link, and said so. Throws.
 */
export function linkShared(layout: ReleaseLayout, dir: string, shared: string[], say: Say): void {
  for (const entry of shared) {
    const isDir = entry.endsWith("/");
    const rel = entry.replace(/\/+$/, "");
    const target = join(layout.shared, rel);
    if (!exists(target)) {
      mkdirSync(dirname(target), { recursive: true });
      if (isDir) mkdirSync(target);
      // Shared files are mostly secrets (`.env`, keys): the service's user alone reads what it creates.
      else writeFileSync(target, "", { flag: "wx", mode: 0o600 });
      say(`shared: created ${target} (${isDir ? "an empty directory" : "an empty file"})`);
    }
    const link = join(dir, rel);
    // The checkout is the repository's: a tracked link on the way (`storage -> /`) must not take a remove or a
    // mkdir outside the release.
    const parents = rel.split("/").slice(0, -1);
    for (let i = 1; i <= parents.length; i++) {
      const parent = join(dir, ...parents.slice(0, i));
      if (!exists(parent)) break;
      if (!isDirectory(parent))
        throw new Error(
          `${entry}: ${relative(dir, parent)} in the release is not a directory (a tracked link or file)`,
        );
    }
    if (exists(link)) {
      const kind = lstatSync(link).isDirectory() ? "directory" : "file";
      rmSync(link, { recursive: true, force: true });
      say(`shared: ${entry} replaces the tracked ${kind} ${rel} of the release`);
    }
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(relative(dirname(link), target), link);
  }
}

const exists = (path: string) => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** Less free room than this on a release's file system counts as a full disk, when a step failed. */
const FULL_BELOW_BYTES = 1024 * 1024;

/** "the file system of <dir> is full (N KiB free)" when it is, to say why a step failed; else undefined. */
export function fullDisk(dir: string): string | undefined {
  try {
    const { bavail, bsize } = statfsSync(dir);
    const free = Number(bavail) * Number(bsize);
    return free < FULL_BELOW_BYTES
      ? `the file system of ${dir} is full: ${Math.floor(free / 1024)} KiB free`
      : undefined;
  } catch {
    return undefined;
  }
}

/** Marks a release complete: from now on it may be switched to. Throws (a full disk). */
export function markComplete(layout: ReleaseLayout, meta: ReleaseMeta): void {
  writeMeta(layout, { ...meta, state: "complete" });
}
