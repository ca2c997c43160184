import { describe, expect, test } from "bun:test";
import { readPollState } from "../../src/control/poll.ts";
import { listDeploys } from "../../src/history/read.ts";
import { lastSkippedPush } from "../../src/triggers/last-skipped.ts";
import { hasEnded, makeRepo, waitFor, type Repo } from "../_support/helpers.ts";
import { pollingServer } from "../_support/poll-helpers.ts";
import { deployRecords } from "../_support/webhook-fixtures.ts";
import { MONOREPO } from "./_fixtures.ts";

const deploys = (repo: Repo) => listDeploys(repo.clone).filter((e) => hasEnded(e.status));
const pollSaid = (repo: Repo, commit: string, result: string) => {
  const state = readPollState(repo.clone, undefined);
  return state?.commit === commit && state.result === result ? state : undefined;
};

describe("polling with paths and skip markers", () => {
  test("a polled commit deploys only when the change since the live commit touches the paths", async () => {
    const repo = makeRepo(MONOREPO);
    await using _server = await pollingServer(repo, 150, { paths: ["apps/web/**"] });
    // No deploy on record yet: the first new commit deploys whatever it touches.
    const first = repo.push({ "README.md": "2\n" });
    await waitFor(() => deploys(repo).length === 1, "the first poll's deploy");
    const readme = repo.push({ "README.md": "3\n" });
    const skipped = await waitFor(() => pollSaid(repo, readme, "skipped"), "the poll that skips");
    expect(skipped.detail).toBe(
      `no change under apps/web/** since ${first.slice(0, 12)} (deploy ${deploys(repo)[0]!.id.slice(0, 8)})`,
    );
    expect(repo.head()).toBe(first);
    expect(lastSkippedPush(repo.clone, undefined)).toMatchObject({ reason: "paths", text: skipped.detail });
    const web = repo.push({ "apps/web/index.ts": "web 2\n" });
    await waitFor(() => deploys(repo).length === 2, "the deploy of the change under apps/web");
    expect(repo.head()).toBe(web);
    expect(deployRecords(repo.clone).at(-1)).toMatchObject({
      trigger: "poll",
      paths: { matched: ["apps/web/index.ts"] },
    });
  });

  test("a polled commit whose message says a skip marker is not deployed", async () => {
    const repo = makeRepo(MONOREPO);
    await using _server = await pollingServer(repo, 150, { skipMarkers: true });
    const marked = repo.push({ "README.md": "2\n" }, "docs [Skip Deploy]");
    const skipped = await waitFor(() => pollSaid(repo, marked, "skipped"), "the poll that skips");
    expect(skipped.detail).toBe(`commit ${marked.slice(0, 12)} says [skip deploy]`);
    const next = repo.push({ "README.md": "3\n" }, "docs");
    await waitFor(() => deploys(repo).length === 1, "the deploy of the unmarked commit");
    expect(repo.head()).toBe(next);
  });
});
