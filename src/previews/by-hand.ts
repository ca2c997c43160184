/**
 * A pull request deployed by hand (`service preview deploy <n>`): the event it stands for, from the head its pull
 * ref has on the remote now and what its preview kept (its forge, title, branch).
 */
import { gitQuery } from "../system/git.ts";
import type { Preview, PullRequestEvent } from "./types.ts";

/** The event of a deploy by hand, or why there is none (the pull ref is not on the remote). */
export async function handEvent(
  repoPath: string,
  number: number,
  existing: Preview | undefined,
  who: { actor: string; base: string },
  env: NodeJS.ProcessEnv,
): Promise<PullRequestEvent | { problem: string }> {
  const fetchRef = existing?.fetchRef ?? `refs/pull/${number}/head`;
  const remote = await gitQuery(repoPath, ["ls-remote", "--", "origin", fetchRef], env);
  const head = /^[0-9a-f]{40}/.exec(remote.stdout)?.[0];
  if (!head) return { problem: `pull request #${number}: ${fetchRef} is not on the remote` };
  return {
    forge: existing?.forge ?? "github",
    action: "open",
    number,
    title: existing?.title ?? "",
    branch: existing?.branch ?? `pr-${number}`,
    base: who.base,
    head,
    fetchRef,
    fork: false,
    author: who.actor,
    sender: who.actor,
    labels: [],
  };
}
