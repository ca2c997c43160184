/**
 * A preview's directory (docs/previews.md "The wall"): the head fetched from the pull request's ref into a private
 * ref of the app's clone, checked against the head the event named, and its tracked files written into
 * `<path>/pr-<number>` by `git archive` from the clone's objects. The directory has no `.git` and no link into the
 * clone; no git command ever runs inside it.
 */
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { defaultRemote, gitEnv, gitQuery, resolveCommit } from "../system/git.ts";
import { runProcess } from "../system/process.ts";
import { asUser } from "./user.ts";
import type { PullRequestEvent } from "./types.ts";

type Env = Record<string, string | undefined>;

/** The refs a forge names a pull request's head by; anything else is not fetched. */
const FETCH_REF = /^refs\/(pull\/\d{1,10}\/head|merge-requests\/\d{1,10}\/head|heads\/[A-Za-z0-9._/-]{1,200})$/;
const ARCHIVE_MS = 10 * 60_000;

/** The private ref of the clone that holds a preview's head. */
export const headRef = (number: number) => `refs/service/previews/pr-${number}`;
/** The private ref that holds the pull request's base branch, for `paths`. */
export const baseRef = (number: number) => `refs/service/previews/pr-${number}-base`;
const BRANCH = /^[A-Za-z0-9._/-]{1,200}$/;

/** Fetches the event's head; a problem (the fetch failed, or it brought another commit: both named) or undefined. */
export async function fetchHead(
  repoPath: string,
  event: Pick<PullRequestEvent, "number" | "head" | "fetchRef" | "base">,
  env: Env,
): Promise<{ problem: string } | { head: string }> {
  if (!FETCH_REF.test(event.fetchRef) || event.fetchRef.includes(".."))
    return { problem: `the pull request's ref ${JSON.stringify(event.fetchRef)} is not one a forge names` };
  const remote = (await defaultRemote(repoPath, env)) ?? "origin";
  const ref = headRef(event.number);
  // The base branch too (for `paths`), when it is a name a branch can have.
  const base =
    BRANCH.test(event.base) && !event.base.includes("..") ? [`+refs/heads/${event.base}:${baseRef(event.number)}`] : [];
  const fetched = await gitQuery(
    repoPath,
    ["fetch", "--no-tags", "--quiet", remote, `+${event.fetchRef}:${ref}`, ...base],
    env,
  );
  if (fetched.code !== 0)
    return { problem: `fetching ${event.fetchRef} failed: ${fetched.stderr.split("\n").at(-1) ?? ""}` };
  const got = await resolveCommit(repoPath, ref, env);
  // Bitbucket names the head by its first 12 hex digits: the fetched commit must start with them.
  if (!got || !(event.head.length < 40 ? got.startsWith(event.head) : got === event.head))
    return {
      problem: `fetched ${got ?? "nothing"} from ${event.fetchRef}, but the event names ${event.head}: not deployed`,
    };
  return { head: got };
}

/** Drops the private ref of a preview's head (at its teardown). */
export async function dropHead(repoPath: string, number: number, env: Env): Promise<void> {
  await gitQuery(repoPath, ["update-ref", "-d", headRef(number)], env);
  await gitQuery(repoPath, ["update-ref", "-d", baseRef(number)], env);
}

/**
 * Writes the head's tracked files into `dir` (emptied first), owned by `user` when set. The directory's parent is
 * made as needed; `dir` itself is 0700. Returns a problem or undefined.
 */
export async function writeTree(repoPath: string, head: string, dir: string, user: string | undefined, env: Env) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true, mode: 0o755 });
  mkdirSync(dir, { mode: 0o700 });
  chmodSync(dir, 0o700);
  let stderr = "";
  // The repository, commit and directory go as arguments: nothing is interpolated into the shell's text.
  const archive = await runProcess(
    [
      "/bin/sh",
      "-c",
      'git -C "$1" archive --format=tar "$2" | tar -x --no-same-owner -C "$3"',
      "sh",
      repoPath,
      head,
      dir,
    ],
    {
      cwd: dirname(dir),
      env: gitEnv(env),
      deadline: Date.now() + ARCHIVE_MS,
      onOutput: (stream, data) => {
        if (stream === "stderr" && stderr.length < 2000) stderr += new TextDecoder().decode(data);
      },
    },
  );
  if (archive.exitCode !== 0) return `writing the preview's files failed: ${stderr.trim() || archive.error || "?"}`;
  if (user) {
    const chown = await runProcess(["chown", "-R", "--", `${user}:`, dir], {
      cwd: dirname(dir),
      env,
      deadline: Date.now() + ARCHIVE_MS,
      onOutput: () => {},
    });
    if (chown.exitCode !== 0) return `giving the preview's files to ${user} failed`;
  }
  return undefined;
}

/** Removes a preview's directory: as its user first (what it made may be theirs alone), then as the service. */
export async function removeTree(dir: string, user: string | undefined): Promise<string | undefined> {
  if (user)
    await runProcess(asUser(user, ["rm", "-rf", "--", dir]), {
      cwd: dirname(dir),
      env: { PATH: process.env.PATH },
      deadline: Date.now() + ARCHIVE_MS,
      onOutput: () => {},
    });
  try {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  } catch (error) {
    return `removing ${dir} failed: ${(error as Error).message}`;
  }
}
