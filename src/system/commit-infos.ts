/**
 * What a record and the stream say of commits: subject, author and date, each commit read once, from its loose
 * object when it is one (gitdir.ts), else with one git call for all of them.
 */
import type { CommitInfo } from "../types.ts";
import { oneLine } from "./actor.ts";
import { type Env, gitQuery } from "./git.ts";
import { type CommitWords, readLooseCommit } from "./gitdir.ts";

/** Longest subject or author name a record keeps of a commit: commit messages are data, like actors. */
const MAX_COMMIT_TEXT = 200;

/**
 * Commits already read, by repository and hash: a commit never changes, so each is read once. Only found ones
 * are kept (a fetch may bring one that was missing), a bounded few.
 */
const knownCommits = new Map<string, Promise<CommitInfo | undefined>>();
const MAX_KNOWN_COMMITS = 256;

function rememberCommit(key: string, info: Promise<CommitInfo | undefined>): void {
  knownCommits.set(key, info);
  if (knownCommits.size > MAX_KNOWN_COMMITS) knownCommits.delete(knownCommits.keys().next().value!);
  void info.then((found) => found || knownCommits.delete(key)).catch(() => knownCommits.delete(key));
}

/**
 * Subject, author and date of each commit, by full hash; a commit that is not in the repository is left out. Each
 * is read once (see knownCommits), from its loose object when it is one (gitdir.ts), else with one git call for all
 * of them.
 */
export async function commitInfos(repoPath: string, commits: string[], env: Env): Promise<Map<string, CommitInfo>> {
  const wanted = [...new Set(commits.filter((c) => /^[0-9a-f]{40,64}$/.test(c)))];
  const reads = new Map<string, Promise<CommitInfo | undefined>>();
  const asked: string[] = [];
  for (const sha of wanted) {
    const key = `${repoPath}\0${sha}`;
    const known = knownCommits.get(key);
    if (known) reads.set(sha, known);
    else asked.push(sha);
  }
  if (asked.length > 0) {
    const loose = await Promise.all(asked.map((sha) => readLooseCommit(repoPath, sha, env)));
    const left = asked.filter((_, i) => !loose[i]);
    const fromGit = left.length > 0 ? showCommits(repoPath, left, env) : undefined;
    asked.forEach((sha, i) => {
      const words = loose[i];
      const read = words ? Promise.resolve(commitInfo(sha, words)) : fromGit!.then((found) => found.get(sha));
      reads.set(sha, read);
      rememberCommit(`${repoPath}\0${sha}`, read);
    });
  }
  const found = new Map<string, CommitInfo>();
  for (const [sha, read] of reads) {
    const info = await read.catch(() => undefined);
    if (info) found.set(sha, info);
  }
  return found;
}

function commitInfo(sha: string, words: CommitWords): CommitInfo {
  return {
    sha,
    subject: oneLine(words.subject, MAX_COMMIT_TEXT) ?? "",
    author: oneLine(words.author, MAX_COMMIT_TEXT) ?? "",
    date: words.date,
  };
}

/** The words of commits as git shows them (one call for all of them). */
async function showCommits(repoPath: string, wanted: string[], env: Env): Promise<Map<string, CommitInfo>> {
  const show = (shas: string[]) =>
    gitQuery(
      repoPath,
      ["show", "--no-patch", "--no-walk=unsorted", "--format=%H%x00%s%x00%an%x00%aI%x00", ...shas],
      env,
    );
  let { code, stdout } = await show(wanted);
  // One commit that is gone (a rewritten history) fails the whole call: ask for each then.
  if (code !== 0 && wanted.length > 1)
    stdout = (await Promise.all(wanted.map(async (sha) => (await show([sha])).stdout))).join("\n");
  const found = new Map<string, CommitInfo>();
  for (const line of stdout.split("\n")) {
    const [sha, subject, author, date] = line.split("\0");
    if (!sha || !wanted.includes(sha)) continue;
    found.set(sha, commitInfo(sha, { subject: subject ?? "", author: author ?? "", date: date ?? "" }));
  }
  return found;
}
