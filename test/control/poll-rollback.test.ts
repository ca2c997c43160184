import { describe, expect, test } from "bun:test";
import { listDeploys } from "../../src/history/read.ts";
import { readPollState, type PollState } from "../../src/control/poll.ts";
import { hasEnded, lastLine, makeRepo, post, runCli, SECRET, waitFor, type Repo } from "../_support/helpers.ts";
import { pollingServer } from "../_support/poll-helpers.ts";

/** The environment of a `service deploy` or `service rollback` in a shell, with the server's script. */
const CLI_ENV = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed" };
/** The deploys that ended. */
const deploys = (repo: Repo) => listDeploys(repo.clone).filter((e) => hasEnded(e.status));
/** The poll state once a poll that ended after `since` (ms) has seen `commit` on the remote. */
const pollAfter = (repo: Repo, since: number, commit: string) => (): PollState | undefined => {
  const state = readPollState(repo.clone, undefined);
  return state && Date.parse(state.at) > since && state.commit === commit ? state : undefined;
};
/** Three polls after `since`: each had its chance to deploy. */
async function threePolls(repo: Repo, commit: string): Promise<PollState> {
  let since = Date.now();
  let state: PollState | undefined;
  for (let i = 0; i < 3; i++) {
    state = await waitFor(pollAfter(repo, since, commit), `poll ${i + 1} of 3`);
    since = Date.parse(state.at);
  }
  return state!;
}

describe('a rollback stays until a new commit is pushed, with polling too (docs/polling.md "Polling")', () => {
  test("a manual rollback of a commit a webhook deployed is not undone by the next polls", async () => {
    const repo = makeRepo();
    const good = repo.head();
    await using server = await pollingServer(repo, 100);
    await waitFor(() => readPollState(repo.clone, undefined), "a first poll");
    const bad = repo.push({ "a.txt": "bad\n" });
    expect(lastLine(await (await post(server.url!, { secret: SECRET })).text())).toBe("[done] ok=true exitCode=0");
    expect(repo.head()).toBe(bad);

    const back = await runCli(["rollback", good], { cwd: repo.clone, env: CLI_ENV });
    expect(back.code).toBe(0);
    expect(repo.head()).toBe(good);
    const state = await threePolls(repo, bad);
    expect(state.result).toBe("unchanged");
    expect(state.detail).toBe(
      `${bad.slice(0, 12)} was deployed already; HEAD stays at ${good.slice(0, 12)} until a new push`,
    );
    expect(repo.head()).toBe(good);
    expect(deploys(repo).map((e) => e.trigger)).toEqual(["rollback", "webhook"]);

    // The next push deploys forward again.
    const fixed = repo.push({ "a.txt": "fixed\n" });
    await waitFor(() => deploys(repo).length === 3, "the poll's deploy of the new commit");
    expect(deploys(repo)[0]!.trigger).toBe("poll");
    expect(repo.head()).toBe(fixed);
  });

  test("an automatic rollback of a webhook's deploy is not undone by the next polls", async () => {
    const repo = makeRepo();
    const good = repo.head();
    // Fails at the pushed commit only (the file it adds), so the rollback's redeploy succeeds.
    await using server = await pollingServer(repo, 100, { runScript: "test ! -f bad.txt", rollbackOnFailure: true });
    await waitFor(() => readPollState(repo.clone, undefined), "a first poll");
    const bad = repo.push({ "bad.txt": "x\n" });
    const answer = await (await post(server.url!, { secret: SECRET })).text();
    expect(answer).toContain("[rollback]");
    expect(repo.head()).toBe(good);

    const state = await threePolls(repo, bad);
    expect(state.result).toBe("unchanged");
    expect(repo.head()).toBe(good);
    expect(deploys(repo).map((e) => [e.trigger, e.rolledBack])).toEqual([["webhook", true]]);
  });

  test("a restart does not undo the rollback either", async () => {
    const repo = makeRepo();
    const good = repo.head();
    const bad = repo.push({ "a.txt": "bad\n" });
    const deployed = await runCli(["deploy"], { cwd: repo.clone, env: CLI_ENV });
    expect(deployed.code).toBe(0);
    const back = await runCli(["rollback", good], { cwd: repo.clone, env: CLI_ENV });
    expect(back.code).toBe(0);
    // A server that starts after both (no poll state yet) finds the remote's commit already tried by a deploy.
    await using _polling = await pollingServer(repo, 100);
    await threePolls(repo, bad);
    expect(repo.head()).toBe(good);
    expect(deploys(repo).map((e) => e.trigger)).toEqual(["rollback", "cli"]);
  });
});
