import { readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * Reads what every deploy asks git (HEAD, whether there is a remote) straight from the repository's files:
 * each git process costs a millisecond or more. Only the plain layout is read — repoPath is the top of its
 * work tree, `.git` a directory, no worktree common dir, no config includes; anything else returns undefined
 * and the caller asks git.
 */

const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** `<repoPath>/.git` when it is a plain git directory and the environment does not point git elsewhere. */
function plainGitDir(repoPath: string, env: Record<string, string | undefined>): string | undefined {
  if (env.GIT_DIR || env.GIT_WORK_TREE || env.GIT_COMMON_DIR) return undefined;
  const dir = join(repoPath, ".git");
  try {
    // A `.git` file (a linked worktree, a submodule) means refs live elsewhere: git is asked then.
    return statSync(dir).isDirectory() ? dir : undefined;
  } catch {
    return undefined;
  }
}

const read = (file: string) => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
};

/** HEAD's commit; null for a branch with no commit yet; undefined when unsure. */
export function readHead(repoPath: string, env: Record<string, string | undefined>): string | null | undefined {
  const gitDir = plainGitDir(repoPath, env);
  if (!gitDir) return undefined;
  const head = read(join(gitDir, "HEAD"))?.trim();
  if (!head) return undefined;
  if (COMMIT.test(head)) return head;
  const ref = /^ref: (refs\/\S+)$/.exec(head)?.[1];
  if (!ref || ref.includes("..")) return undefined;
  const loose = read(resolve(gitDir, ref))?.trim();
  if (loose !== undefined) return COMMIT.test(loose) ? loose : undefined;
  const packed = read(join(gitDir, "packed-refs"));
  if (packed === undefined) return null;
  for (const line of packed.split("\n")) {
    const [commit, name] = line.split(" ");
    if (name === ref && commit && COMMIT.test(commit)) return commit;
  }
  return null;
}

/** Whether the repository's own config names a remote; undefined when unsure (it includes other files). */
export function readHasRemote(repoPath: string, env: Record<string, string | undefined>): boolean | undefined {
  const gitDir = plainGitDir(repoPath, env);
  const config = gitDir ? read(join(gitDir, "config")) : undefined;
  if (config === undefined || /^\s*\[include/im.test(config)) return undefined;
  return /^\s*\[remote\s+"/m.test(config);
}

/** The branch HEAD names (`main`); null for a detached HEAD; undefined when unsure. */
export function readBranch(repoPath: string, env: Record<string, string | undefined>): string | null | undefined {
  const gitDir = plainGitDir(repoPath, env);
  const head = gitDir ? read(join(gitDir, "HEAD"))?.trim() : undefined;
  if (!head) return undefined;
  if (COMMIT.test(head)) return null;
  return /^ref: refs\/heads\/(\S+)$/.exec(head)?.[1];
}

/** The words of a commit as `git show --format=%s%x00%an%x00%aI` gives them. */
export interface CommitWords {
  subject: string;
  author: string;
  date: string;
}

/**
 * A commit's subject, author and date read from its loose object (`.git/objects/ab/cdef…`, where a fetch of a few
 * commits puts them), without a git process. Undefined when the object is packed or elsewhere (objects moved by
 * the environment), or anything about it is unusual (another encoding, a message that does not start at once):
 * the caller asks git then.
 */
export async function readLooseCommit(
  repoPath: string,
  commit: string,
  env: Record<string, string | undefined>,
): Promise<CommitWords | undefined> {
  if (env.GIT_OBJECT_DIRECTORY || env.GIT_ALTERNATE_OBJECT_DIRECTORIES || !COMMIT.test(commit)) return undefined;
  const gitDir = plainGitDir(repoPath, env);
  if (!gitDir) return undefined;
  let data: Buffer;
  try {
    const object = readFileSync(join(gitDir, "objects", commit.slice(0, 2), commit.slice(2)));
    // Loaded at the first commit read, not with every module that reads HEAD.
    const { inflateSync } = await import("node:zlib");
    data = inflateSync(object);
  } catch {
    return undefined;
  }
  const nul = data.indexOf(0);
  if (nul < 0 || !data.subarray(0, nul).toString("latin1").startsWith("commit ")) return undefined;
  const body = data.subarray(nul + 1);
  const text = body.toString("utf8");
  // Bytes that are not UTF-8 are re-encoded by git: not read here.
  if (text.includes("\uFFFD") || !Buffer.from(text, "utf8").equals(body)) return undefined;
  const end = text.indexOf("\n\n");
  if (end < 0) return undefined;
  const headers = text.slice(0, end).split("\n");
  if (headers.some((line) => line.startsWith("encoding "))) return undefined;
  const author = headers.find((line) => line.startsWith("author "));
  const ident = author && /^author (.*?) *<[^>]*> (\d+) ([+-])(\d\d)(\d\d)$/.exec(author);
  if (!ident) return undefined;
  const message = text.slice(end + 2);
  // git skips a message's leading blank lines; a message that has them is left to git.
  if (message === "" || /^\s*\n/.test(message)) return undefined;
  // %s: the first paragraph, its lines without their trailing blanks, joined by spaces.
  const subject: string[] = [];
  for (const line of message.split("\n")) {
    const trimmed = line.replace(/\s+$/, "");
    if (trimmed === "") break;
    subject.push(trimmed);
  }
  const [, name, seconds, sign, hours, minutes] = ident as unknown as [string, string, string, string, string, string];
  const offset = (sign === "-" ? -1 : 1) * (Number(hours) * 60 + Number(minutes));
  const local = new Date((Number(seconds) + offset * 60) * 1000).toISOString().slice(0, 19);
  return { subject: subject.join(" "), author: name, date: `${local}${sign}${hours}:${minutes}` };
}
