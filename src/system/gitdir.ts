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
