/**
 * Polling with `tags` (docs/polling.md "Tags"): the poller watches the remote's tags and deploys the highest
 * matching one when it changes, once: a tag object's id is not its commit's, so the live commit is compared with
 * the tag's peeled commit, and the same tag is not deployed again at every poll.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { readPollState } from "../../src/control/poll.ts";
import { listDeploys } from "../../src/history/read.ts";
import { git, hasEnded, makeRepo, type Repo, waitFor } from "../_support/helpers.ts";
import { pollingServer } from "../_support/poll-helpers.ts";

const polls = (repo: Repo) => readPollState(repo.clone, undefined);
const deploys = (repo: Repo) => listDeploys(repo.clone).filter((e) => hasEnded(e.status));

/** A commit on main tagged `name` (annotated), both pushed; returns the commit. */
function release(repo: Repo, name: string): string {
  const commit = repo.push({ "version.txt": `${name}\n` }, `release ${name}`);
  git(join(repo.dir, "pusher"), "tag", "-a", name, "-m", name);
  git(join(repo.dir, "pusher"), "push", "--quiet", "origin", `refs/tags/${name}`);
  return commit;
}

describe("polling with tags", () => {
  test("a new matching tag is deployed once; a branch commit and a tag outside the range are not", async () => {
    const repo = makeRepo();
    const v100 = release(repo, "v1.0.0");
    await using _server = await pollingServer(repo, 100, { tags: "^1.0" });
    await waitFor(() => deploys(repo).length === 1, "the first tag's deploy");
    expect(repo.head()).toBe(v100);
    await waitFor(() => polls(repo)?.result === "unchanged", "a poll that finds the tag live");

    const v110 = release(repo, "v1.1.0");
    release(repo, "v2.0.0");
    repo.push({ "b.txt": "b\n" }, "a commit on main");
    await waitFor(() => deploys(repo).length === 2, "the new tag's deploy");
    expect(repo.head()).toBe(v110);
    const [newest] = deploys(repo);
    expect(newest).toMatchObject({ trigger: "poll", ref: "refs/tags/v1.1.0", ok: true });

    // More polls, none of which deploys v1.1.0 again.
    const seen = Date.parse(polls(repo)!.at);
    await waitFor(() => {
      const state = polls(repo);
      return state && Date.parse(state.at) > seen + 500 && state.result === "unchanged" ? state : undefined;
    }, "more polls");
    expect(polls(repo)).toMatchObject({ commit: v110, detail: "tag v1.1.0 is live" });
    expect(deploys(repo)).toHaveLength(2);
  });
});
