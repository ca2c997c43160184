/**
 * What a poll asks the remote for (docs/polling.md): the remote and full ref of the app's `branch`, or of the
 * checked-out branch's upstream; `service check` asks the same questions synchronously (TARGET_QUERIES).
 */
import { gitQuery } from "../system/git.ts";

export const TARGET_QUERIES = [
  ["symbolic-ref", "--quiet", "--short", "HEAD"],
  ["config", "--get-regexp", "^(branch\\..*\\.(remote|merge)|remote\\..*\\.url)$"],
] as const;

export type PollTarget = { remote: string; ref: string };

/**
 * The remote and full ref a poll asks for, from the answers to TARGET_QUERIES (exit code and output each), or
 * why the branch cannot be polled: `branch` when set (on the upstream's remote, else the first one), else the
 * upstream of the checked-out branch.
 */
export function pollTargetOf(
  repoPath: string,
  branch: string | undefined,
  answers: { code: number | null; stdout: string }[],
): PollTarget | string {
  const [head, config] = answers;
  const current = head?.code === 0 && head.stdout ? head.stdout.trim() : undefined;
  const values = new Map<string, string>();
  const remotes: string[] = [];
  for (const line of config?.code === 0 ? config.stdout.split("\n") : []) {
    const space = line.indexOf(" ");
    if (space < 0) continue;
    const key = line.slice(0, space);
    values.set(key, line.slice(space + 1));
    const remote = /^remote\.(.+)\.url$/.exec(key)?.[1];
    if (remote) remotes.push(remote);
  }
  const upstreamRemote = current ? values.get(`branch.${current}.remote`) : undefined;
  if (branch) {
    const remote = upstreamRemote ?? remotes[0];
    if (!remote) return `repoPath ${repoPath} has no remote to poll`;
    return { remote, ref: branch.startsWith("refs/") ? branch : `refs/heads/${branch}` };
  }
  if (!current)
    return `repoPath ${repoPath} has no branch checked out (detached HEAD) and no "branch" key: nothing to poll`;
  const merge = values.get(`branch.${current}.merge`);
  if (!upstreamRemote || !merge) {
    const why = remotes.length === 0 ? "the repository has no remote" : "git branch --set-upstream-to sets one";
    return `branch ${current} of repoPath ${repoPath} has no upstream (${why}) and no "branch" key: it cannot be polled`;
  }
  return { remote: upstreamRemote, ref: merge };
}

/** The remote and ref a poll of `repoPath` asks for, or why there is none. */
export async function pollTarget(
  repoPath: string,
  branch: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PollTarget | string> {
  const answers = await Promise.all(TARGET_QUERIES.map((args) => gitQuery(repoPath, [...args], env)));
  return pollTargetOf(repoPath, branch, answers);
}
