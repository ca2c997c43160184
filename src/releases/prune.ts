/**
 * Removing releases: one (a failed build, a crash's leftover) or those past `keep` (docs/releases.md "Keep"), and the
 * clone's bookkeeping of their worktrees.
 */
import { rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { gitEnv } from "../system/git.ts";
import { runProcess } from "../system/process.ts";
import {
  type KeptRelease,
  listReleases,
  metaFile,
  RELEASE_ID,
  readMeta,
  type ReleaseLayout,
  writeMeta,
} from "./files.ts";

type Env = Record<string, string | undefined>;

/** How long one git command of these stages may take (a worktree of a large repository writes every file). */
const GIT_LIMIT_MS = 10 * 60_000;

/** Removes a release: its record first marked, so a crash in the middle never leaves one that looks complete. */
export async function removeRelease(layout: ReleaseLayout, id: string, repoPath: string, env: Env): Promise<void> {
  await removeFiles(layout, id);
  await pruneWorktrees(repoPath, env);
}

/**
 * A release's directory and record, without the clone's bookkeeping (see pruneWorktrees). The directory is removed
 * off the event loop: a release of many files takes a while, and the server meanwhile sends the `[done]` line that
 * came before the pruning and answers every other request.
 */
export async function removeFiles(layout: ReleaseLayout, id: string): Promise<void> {
  const meta = readMeta(layout, id);
  if (meta && meta.state !== "removing") {
    try {
      writeMeta(layout, { ...meta, state: "removing" });
    } catch {
      // A full disk: without its record the directory is not a kept release either.
      rmSync(metaFile(layout, id), { force: true });
    }
  }
  await rm(join(layout.releases, id), { recursive: true, force: true });
  rmSync(metaFile(layout, id), { force: true });
}

/** The clone forgets the worktrees whose directories are gone. */
export async function pruneWorktrees(repoPath: string, env: Env): Promise<void> {
  await releaseGit(repoPath, ["worktree", "prune"], env, () => {});
}

/**
 * The `keep` releases to keep: the newest of each commit first, newest commit first, so that `keep` commits stay
 * to switch back to however often one was built again; then, with fewer commits than that, the newest others.
 */
export function keptIds(releases: KeptRelease[], keep: number): string[] {
  const commits = new Set<string | null>();
  const first: string[] = [];
  const others: string[] = [];
  for (const release of releases) {
    const seen = release.commit !== null && commits.has(release.commit);
    commits.add(release.commit);
    (seen ? others : first).push(release.id);
  }
  return [...first, ...others].slice(0, keep);
}

/**
 * Keeps `keep` complete releases (keptIds), and whatever `protect` names (the live one, the one it replaced, the
 * one this deploy built). Returns the ids removed.
 */
export async function pruneReleases(
  layout: ReleaseLayout,
  keep: number,
  protect: (string | null | undefined)[],
  repoPath: string,
  env: Env,
): Promise<string[]> {
  const kept = listReleases(layout);
  const spared = new Set([...keptIds(kept, keep), ...protect.filter(Boolean)]);
  const removed = kept.filter((r) => !spared.has(r.id) && RELEASE_ID.test(r.id) && r.deployId !== null);
  for (const release of removed) await removeFiles(layout, release.id);
  if (removed.length > 0) await pruneWorktrees(repoPath, env);
  return removed.map((r) => r.id);
}

/** A git command in the clone, its output to `onOutput`. */
export function releaseGit(
  repoPath: string,
  args: string[],
  env: Env,
  onOutput: (s: "stdout" | "stderr", d: Uint8Array) => void,
) {
  return runProcess(["git", ...args], {
    cwd: repoPath,
    env: gitEnv(env),
    deadline: Date.now() + GIT_LIMIT_MS,
    onOutput,
  });
}
