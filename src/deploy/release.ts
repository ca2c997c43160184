/**
 * The stages of a deploy with releases (docs/releases.md): prepare a release (a git worktree of the commit, the
 * shared paths linked in), switch `current` to it in one rename, remove and prune releases. The flow that calls
 * them is release-flow.ts; what a crash left is release-recovery.ts.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statfsSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import { gitEnv } from "../system/git.ts";
import { OWN_START } from "../system/liveness.ts";
import { runProcess } from "../system/process.ts";
import {
  isDirectory,
  listReleases,
  metaFile,
  newReleaseId,
  RELEASE_ID,
  readMeta,
  type ReleaseLayout,
  type ReleaseMeta,
  writeMeta,
} from "./release-files.ts";

type Env = Record<string, string | undefined>;
type Say = (text: string) => void;

/** How long one git command of these stages may take (a worktree of a large repository writes every file). */
const GIT_LIMIT_MS = 10 * 60_000;

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
  const added = await git(
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
      else writeFileSync(target, "", { flag: "wx" });
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

/**
 * Points `current` at the release in one rename(2) of a new link over it: a reader finds the old release or the
 * new one, never none and never a half-built one. Throws.
 */
export function switchCurrent(layout: ReleaseLayout, id: string): void {
  const temp = join(layout.root, `current.${process.pid}.${randomBytes(8).toString("hex")}.tmp`);
  symlinkSync(join("releases", id), temp);
  try {
    renameSync(temp, layout.current);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  syncDir(layout.root);
}

/** The rename on disk before the deploy goes on (a power cut must not bring back the old link unannounced). */
function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {}
}

/** Removes a release: its record first marked, so a crash in the middle never leaves one that looks complete. */
export async function removeRelease(layout: ReleaseLayout, id: string, repoPath: string, env: Env): Promise<void> {
  removeFiles(layout, id);
  await pruneWorktrees(repoPath, env);
}

/** A release's directory and record, without the clone's bookkeeping (see pruneWorktrees). */
export function removeFiles(layout: ReleaseLayout, id: string): void {
  const meta = readMeta(layout, id);
  if (meta && meta.state !== "removing") {
    try {
      writeMeta(layout, { ...meta, state: "removing" });
    } catch {
      // A full disk: without its record the directory is not a kept release either.
      rmSync(metaFile(layout, id), { force: true });
    }
  }
  rmSync(join(layout.releases, id), { recursive: true, force: true });
  rmSync(metaFile(layout, id), { force: true });
}

/** The clone forgets the worktrees whose directories are gone. */
export async function pruneWorktrees(repoPath: string, env: Env): Promise<void> {
  await git(repoPath, ["worktree", "prune"], env, () => {});
}

/**
 * Keeps the `keep` newest complete releases, and whatever `protect` names (the live one, the one it replaced,
 * the one this deploy built). Returns the ids removed.
 */
export async function pruneReleases(
  layout: ReleaseLayout,
  keep: number,
  protect: (string | null | undefined)[],
  repoPath: string,
  env: Env,
): Promise<string[]> {
  const kept = listReleases(layout);
  const spared = new Set([...kept.slice(0, keep).map((r) => r.id), ...protect.filter(Boolean)]);
  const removed = kept.filter((r) => !spared.has(r.id) && RELEASE_ID.test(r.id) && r.deployId !== null);
  for (const release of removed) removeFiles(layout, release.id);
  if (removed.length > 0) await pruneWorktrees(repoPath, env);
  return removed.map((r) => r.id);
}

/** A git command in the clone, its output to `onOutput`. */
function git(repoPath: string, args: string[], env: Env, onOutput: (s: "stdout" | "stderr", d: Uint8Array) => void) {
  return runProcess(["git", ...args], {
    cwd: repoPath,
    env: gitEnv(env),
    deadline: Date.now() + GIT_LIMIT_MS,
    onOutput,
  });
}
