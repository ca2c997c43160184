/**
 * The releases directory (docs/releases.md "The layout"): `releases/<id>/` (a checkout of one commit, built),
 * `releases/<id>.json` (what the service knows of it), `current` (a link to the live one) and `shared/`. Reading
 * it costs no process: `service status`, the admin API and `service check` use this module alone.
 */
import {
  accessSync,
  constants,
  existsSync,
  lstatSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  statSync,
} from "node:fs";
import { basename, join, relative, isAbsolute } from "node:path";
import { resolveReleases } from "../config/releases.ts";
import type { ReleaseSettings } from "../config/releases.ts";
import { readNoFollow, writeFileAtomic } from "../system/files.ts";

/** `20261124T101500Z-1a2b3c4d5e6f`: the UTC time, then the commit; `-2`… when the same second made another. */
export const RELEASE_ID = /^\d{8}T\d{6}Z-[0-9a-f]{12}(?:-\d+)?$/;

export interface ReleaseLayout {
  root: string;
  releases: string;
  current: string;
  shared: string;
}

/** The layout of a releases directory; a relative `path` is relative to `cwd`. */
export function layoutOf(settings: Pick<ReleaseSettings, "path">, cwd = process.cwd()): ReleaseLayout {
  const { path: root } = resolveReleases(settings, cwd);
  return { root, releases: join(root, "releases"), current: join(root, "current"), shared: join(root, "shared") };
}

/** A new release's id: the time and the commit, unique among the releases there are. */
export function newReleaseId(layout: ReleaseLayout, now: Date, commit: string): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  const base = `${stamp}-${commit.slice(0, 12)}`;
  let id = base;
  for (let n = 2; existsSync(join(layout.releases, id)) || existsSync(metaFile(layout, id)); n++) id = `${base}-${n}`;
  return id;
}

/** What the service records of a release, next to its directory. */
export interface ReleaseMeta {
  id: string;
  commit: string;
  /** The deploy that built it. */
  deployId: string;
  app?: string;
  createdAt: string;
  /**
   * `preparing` until its build succeeded, `complete` after (only a complete release is ever switched to),
   * `removing` while pruned. A crash leaves the first or the last, which the next deploy cleans up.
   */
  state: "preparing" | "complete" | "removing";
  /** The process preparing it, so a live one's release is never taken for a crash's leftover. */
  pid: number;
  pidStart: string;
}

export const metaFile = (layout: ReleaseLayout, id: string) => join(layout.releases, `${id}.json`);

export function readMeta(layout: ReleaseLayout, id: string): ReleaseMeta | undefined {
  try {
    const meta = JSON.parse(readNoFollow(metaFile(layout, id))) as ReleaseMeta;
    return meta && typeof meta === "object" && meta.id === id && typeof meta.commit === "string" ? meta : undefined;
  } catch {
    return undefined;
  }
}

/** Written whole or not at all. Throws (a full disk). */
export function writeMeta(layout: ReleaseLayout, meta: ReleaseMeta): void {
  writeFileAtomic(metaFile(layout, meta.id), `${JSON.stringify(meta, null, 2)}\n`, 0o644);
}

/** The release `current` names (its directory name), or null when there is no `current` link. */
export function liveReleaseId(layout: ReleaseLayout): string | null {
  try {
    return basename(readlinkSync(layout.current));
  } catch {
    return null;
  }
}

/** One kept release as `service status` and the API show it. */
export interface KeptRelease {
  id: string;
  path: string;
  /** null for a directory the service did not make (a site moved over by hand). */
  commit: string | null;
  deployId: string | null;
  createdAt: string | null;
  live: boolean;
}

/** The complete releases, newest first, and the live one whatever made it. */
export function listReleases(layout: ReleaseLayout): KeptRelease[] {
  const live = liveReleaseId(layout);
  let names: string[];
  try {
    names = readdirSync(layout.releases);
  } catch {
    names = [];
  }
  const out: KeptRelease[] = [];
  for (const id of names) {
    if (!RELEASE_ID.test(id) && id !== live) continue;
    const path = join(layout.releases, id);
    if (!isDirectory(path)) continue;
    const meta = readMeta(layout, id);
    if (meta ? meta.state !== "complete" : id !== live) continue;
    out.push({
      id,
      path,
      commit: meta?.commit ?? null,
      deployId: meta?.deployId ?? null,
      createdAt: meta?.createdAt ?? null,
      live: id === live,
    });
  }
  return out.sort((a, b) => (b.createdAt ?? "").localeCompare(a.createdAt ?? "") || b.id.localeCompare(a.id));
}

export function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Its real path when it exists (links resolved), else as given. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

const inside = (child: string, parent: string) => {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

/**
 * Why the releases directory cannot be used, naming the path and what to do; undefined when it can. Checked
 * before a deploy pulls or builds anything, and by `service check`.
 */
export function releasesPathProblem(settings: Pick<ReleaseSettings, "path">, repoPath: string): string | undefined {
  const { root, current } = layoutOf(settings);
  if (!existsSync(root))
    return `releases.path ${root} does not exist: create it, owned by the service's user (mkdir -p ${root})`;
  if (!statSync(root).isDirectory()) return `releases.path ${root} is not a directory`;
  try {
    accessSync(root, constants.W_OK | constants.X_OK);
  } catch {
    return `releases.path ${root} is not writable by the service's user: chown it to that user`;
  }
  if (inside(real(root), real(repoPath)))
    return `releases.path ${root} is inside repoPath ${repoPath}: put it outside the clone (releases there would be files of the checkout)`;
  // The other way round: releases would be made inside the clone, or its pull would change shared files live.
  const owner = [join(root, "releases"), join(root, "shared"), current].find(
    (dir) => inside(repoPath, dir) || inside(real(repoPath), real(dir)),
  );
  if (owner)
    return `repoPath ${repoPath} is inside ${owner}, part of releases.path ${root}: put the clone outside releases/, shared/ and current (beside them, as ${join(root, "repo")})`;
  let kind: string | undefined;
  try {
    const stat = lstatSync(current);
    if (!stat.isSymbolicLink()) kind = stat.isDirectory() ? "a directory" : "a file";
  } catch {}
  if (kind)
    return `${current} is ${kind}, not a link to a release: move the site under ${join(root, "releases")} once (docs/releases.md "Moving an existing site over")`;
  return undefined;
}

/**
 * The shared files (not directories) that other users can read: they are mostly secrets (`.env`, keys), and the
 * service creates them 0600. Said by `service check`.
 */
export function sharedFileWarnings(settings: Pick<ReleaseSettings, "path" | "shared">): string[] {
  const { shared } = layoutOf(settings);
  const warnings: string[] = [];
  for (const entry of settings.shared ?? []) {
    if (entry.endsWith("/")) continue;
    const file = join(shared, entry);
    let mode: number;
    try {
      const stat = statSync(file);
      if (!stat.isFile()) continue;
      mode = stat.mode & 0o777;
    } catch {
      continue; // made on first use
    }
    if ((mode & 0o044) !== 0)
      warnings.push(
        `${file} (shared by releases) can be read by other users (mode ${mode.toString(8).padStart(4, "0")}): run chmod 600 ${file}`,
      );
  }
  return warnings;
}

/** `npm ci` (or its other names) as a command of a run script. */
const NPM_CI = /(^|[^\w-])npm\s+(ci|clean-install|install-clean)(?=$|[\s;&|)])/m;

/**
 * A carried `node_modules` that the run script's `npm ci` deletes before it installs (docs/releases.md "Carrying a
 * build cache"): copied for nothing. Said by `service check`.
 */
export function carryWarnings(settings: Pick<ReleaseSettings, "carry">, runScript: string | undefined): string[] {
  const modules = settings.carry?.find((entry) => /(^|\/)node_modules\/?$/.test(entry));
  if (!modules || !runScript || !NPM_CI.test(runScript)) return [];
  return [
    `releases.carry has ${modules.replace(/\/$/, "")}, but the run script runs npm ci, which deletes node_modules before it installs: nothing carried is used (build with npm install, or carry npm's cache: npm ci --cache .npm-cache with carry: [.npm-cache]; docs/releases.md)`,
  ];
}

/** An app's releases as `service status`, its `--json` and `GET /api/apps` show them. */
export interface ReleasesView {
  path: string;
  keep: number;
  /** The release `current` names, or null (no deploy yet). */
  live: KeptRelease | null;
  /** Every kept release, newest first, the live one among them. */
  kept: KeptRelease[];
}

export function releasesView(settings: ReleaseSettings, cwd: string): ReleasesView {
  const resolved = resolveReleases(settings, cwd);
  const kept = listReleases(layoutOf(resolved));
  return { path: resolved.path, keep: resolved.keep, live: kept.find((r) => r.live) ?? null, kept };
}
