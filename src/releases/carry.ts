/**
 * Carrying a build cache (docs/releases.md "Carrying a build cache"): each `releases.carry` path is copied from the
 * live release into the new one before its build, so `npm ci` and the like fetch only what changed. A copy, never a
 * link or a shared directory: the releases stay apart, and a rollback stays a plain switch.
 */
import { lstatSync, mkdirSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import type { DeployContext } from "../steps/context.ts";
import { short } from "../system/git.ts";
import { runProcess } from "../system/process.ts";
import { releaseGit } from "./prune.ts";

type Env = Record<string, string | undefined>;
type Say = (text: string) => void;

/** What was carried of one path. */
export interface Carried {
  path: string;
  files: number;
  bytes: number;
}

/** What a release's record says of the carry. */
export interface CarryResult {
  carried: Carried[];
  noCarry?: true;
}

const bare = (entry: string) => entry.replace(/\/+$/, "");

/** Why the commit cannot be built with `carry`: a carried path it tracks (docs/releases.md "Carrying a build cache"). */
export async function carryRefused(ctx: DeployContext, carry: string[], commit: string): Promise<string | undefined> {
  try {
    const tracked = await trackedCarry(ctx.config.repoPath, commit, carry, ctx.env);
    return tracked === undefined
      ? undefined
      : `releases.carry: ${tracked} is tracked in commit ${short(commit)}: a carried cache must not overwrite the repository's files (remove it from releases.carry, or from the repository)`;
  } catch (error) {
    return `releases.carry: cannot tell whether commit ${short(commit)} tracks a carried path: ${(error as Error).message}`;
  }
}

/**
 * The carry of a deploy (releases/flow.ts): into the release just prepared at `dir`, from the live one, within the run
 * script's timeout. What was carried, or why the release cannot be built.
 */
export function carryStep(
  ctx: DeployContext,
  carry: string[],
  live: { id: string; dir: string } | null,
  dir: string,
  noCarry: boolean | undefined,
  onOutput: (stream: "stdout" | "stderr", data: Uint8Array) => void,
): Promise<CarryResult | string> {
  const options = { env: ctx.env, deadline: Date.now() + ctx.config.runTimeoutMs, noCarry };
  const say = (text: string) => ctx.run.step("release", text);
  return carryInto(carry, live, dir, options, say, onOutput).catch(
    (error: Error) => `carrying failed: ${error.message}`,
  );
}

/**
 * The first carry path the commit tracks (or tracks something inside), or undefined: a cache copied there would
 * overwrite the repository's own files. Throws when git cannot say.
 */
export async function trackedCarry(
  repoPath: string,
  commit: string,
  carry: string[],
  env: Env,
): Promise<string | undefined> {
  if (carry.length === 0) return undefined;
  let out = "";
  const decoder = new TextDecoder();
  const listed = await releaseGit(
    repoPath,
    ["--literal-pathspecs", "ls-tree", "--name-only", "-z", commit, "--", ...carry.map(bare)],
    env,
    (stream, data) => {
      if (stream === "stdout") out += decoder.decode(data, { stream: true });
    },
  );
  if (listed.exitCode !== 0)
    throw new Error(
      `git ls-tree failed: ${listed.error ?? (listed.timedOut ? "timed out" : `exit code ${listed.exitCode}`)}`,
    );
  const tracked = new Set(out.split("\0").filter(Boolean));
  return carry.find((entry) => tracked.has(bare(entry)));
}

/**
 * Copies each carry path from the live release `from` into the new release `to` (`cp -a --reflink=auto`: a
 * copy-on-write clone where the file system can, links copied as links, never followed), within `deadline`. Only real
 * directories and files: a path missing in the live release, or that is a link, is skipped, and so are the links inside
 * it that lead out of the release; each said. Returns what was carried, or why the release cannot be built.
 */
export async function carryInto(
  carry: string[],
  from: { id: string; dir: string } | null,
  to: string,
  options: { env: Env; deadline: number; noCarry?: boolean },
  say: Say,
  onOutput: (stream: "stdout" | "stderr", data: Uint8Array) => void,
): Promise<CarryResult | string> {
  if (options.noCarry) {
    say("carry: not carried (asked with --no-carry): building from nothing");
    return { carried: [], noCarry: true };
  }
  if (!from) {
    say("carry: no live release yet: nothing to carry");
    return { carried: [] };
  }
  const carried: Carried[] = [];
  for (const entry of carry) {
    const rel = bare(entry);
    const source = join(from.dir, rel);
    // Only what the live release holds itself: a link on the way there would carry what it points at.
    if (!realDirectories(from.dir, rel) || !exists(source)) {
      say(`carry: ${entry} is not in release ${from.id}: skipped`);
      continue;
    }
    // A link carried as a link would have the build write through it, into the release it names (the live one).
    const kind = lstatSync(source);
    if (!kind.isDirectory() && !kind.isFile()) {
      const what = kind.isSymbolicLink() ? "a link" : "a special file";
      say(
        `carry: ${entry} in release ${from.id} is ${what}, not a directory or a file: skipped (only real directories and files are carried)`,
      );
      continue;
    }
    const target = join(to, rel);
    // Nor a link on the way into the new release (a tracked `cache -> /`): the copy must land inside it.
    const parent = firstNotDirectory(to, rel);
    if (parent)
      return `releases.carry: ${entry}: ${relative(to, parent)} in the release is not a directory (a tracked link or file)`;
    if (exists(target)) return `releases.carry: ${entry} already exists in the new release`;
    mkdirSync(dirname(target), { recursive: true });
    const copied = await runProcess(["cp", "-a", "--reflink=auto", "--", source, target], {
      cwd: to,
      env: options.env,
      deadline: options.deadline,
      onOutput,
    });
    if (copied.exitCode !== 0) {
      const why = copied.timedOut
        ? "timed out (runTimeoutMs)"
        : (copied.error ?? `cp exited with code ${copied.exitCode}`);
      return `carrying ${entry} from release ${from.id} failed: ${why}`;
    }
    const { skipped, ...size } = settle(target, to);
    if (skipped.length > 0) say(`carry: ${entry}: skipped ${describeSkipped(skipped)}`);
    carried.push({ path: entry, ...size });
    say(`carried ${entry} (${size.files} files, ${formatBytes(size.bytes)}) from ${from.id}`);
  }
  return { carried };
}

/** Whether each directory on the way to `rel` under `root` is a real directory (not a link, not a file). */
function realDirectories(root: string, rel: string): boolean {
  return firstNotDirectory(root, rel) === undefined;
}

/** The first path on the way to `rel` under `root` that exists and is not a real directory. */
function firstNotDirectory(root: string, rel: string): string | undefined {
  const parts = rel.split("/").slice(0, -1);
  for (let i = 1; i <= parts.length; i++) {
    const path = join(root, ...parts.slice(0, i));
    try {
      if (!lstatSync(path).isDirectory()) return path;
    } catch {
      return undefined; // made by the copy
    }
  }
  return undefined;
}

const exists = (path: string) => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/**
 * What was copied to `path` in the release `root`, made safe to build in: a link that leads out of the release (to the
 * live release, anywhere else on the machine) and anything that is neither a directory, a file nor a link are removed,
 * and named (relative to the release); links are never followed. The entries kept and their bytes.
 */
function settle(path: string, root: string): { files: number; bytes: number; skipped: Skipped[] } {
  let files = 0;
  let bytes = 0;
  const skipped: Skipped[] = [];
  const release = resolve(root);
  const pending = [path];
  while (pending.length > 0) {
    const next = pending.pop()!;
    const stat = lstatSync(next);
    if (stat.isDirectory()) {
      for (const name of readdirSync(next)) pending.push(join(next, name));
      continue;
    }
    const out = stat.isSymbolicLink() ? leadsOut(next, release) : !stat.isFile();
    if (out) {
      rmSync(next, { force: true });
      skipped.push({ path: relative(release, next), link: stat.isSymbolicLink() });
      continue;
    }
    files++;
    bytes += stat.size;
  }
  return { files, bytes, skipped };
}

interface Skipped {
  path: string;
  link: boolean;
}

/** Whether the link at `path` names something outside `release` (resolved by its text, never followed). */
function leadsOut(path: string, release: string): boolean {
  const text = readlinkSync(path);
  const target = isAbsolute(text) ? resolve(text) : resolve(dirname(path), text);
  return target !== release && !target.startsWith(`${release}/`);
}

/** `1 link leading out of the release: node_modules/.bin/tool` (the first five named), and the special files. */
function describeSkipped(skipped: Skipped[]): string {
  const parts: string[] = [];
  for (const link of [true, false]) {
    const some = skipped.filter((s) => s.link === link);
    if (some.length === 0) continue;
    const what = link
      ? `${some.length} link${some.length === 1 ? "" : "s"} leading out of the release`
      : `${some.length} special file${some.length === 1 ? "" : "s"} (neither a directory, a file nor a link)`;
    const named = some.slice(0, 5).map((s) => s.path);
    parts.push(`${what}: ${named.join(", ")}${some.length > 5 ? ", …" : ""}`);
  }
  return parts.join("; ");
}

/** 38.2 MB, 14.9 kB, 512 B: decimal units, as `du --si` says them. */
export function formatBytes(bytes: number): string {
  const units = ["kB", "MB", "GB", "TB"];
  if (bytes < 1000) return `${bytes} B`;
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
