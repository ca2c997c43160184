/**
 * What is live before any deploy left a commit live (docs/deploy-control.md "What is live"): the commit the first
 * deploy on record found checked out, read from the oldest records, not what failed deploys left checked out since.
 */
import { describe, expect, test } from "bun:test";
import { liveCommitOf } from "../../src/history/live.ts";
import { newestDeploys, oldestDeploys } from "../../src/history/read.ts";
import { makeRepo, post, SECRET, startServer } from "../_support/helpers.ts";

describe('the live commit before the first ok deploy (docs/deploy-control.md "What is live")', () => {
  test("after failed deploys only, the live commit is the one checked out before the first of them", async () => {
    const repo = makeRepo({ "build.sh": "exit 2\n" });
    const before = repo.head();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "sh build.sh" });
    repo.push({ "build.sh": "exit 3\n" }, "Broken");
    expect(await (await post(server.url, { secret: SECRET })).text()).toContain("[done] ok=false");
    repo.push({ "build.sh": "exit 4\n" }, "Still broken");
    expect(await (await post(server.url, { secret: SECRET })).text()).toContain("[done] ok=false");
    // The second deploy found the first one's pull checked out: not live, as that deploy failed.
    expect(repo.head()).not.toBe(before);
    expect(liveCommitOf(repo.clone, undefined)?.sha).toBe(before);
  });

  test("oldestDeploys lists newestDeploys' order reversed, and stops at its limit", async () => {
    const repo = makeRepo({ "build.sh": "exit 0\n" });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "sh build.sh" });
    for (const n of [1, 2, 3]) {
      repo.push({ "build.sh": `exit 0 # ${n}\n` }, `Change ${n}`);
      expect(await (await post(server.url, { secret: SECRET })).text()).toContain("[done] ok=true");
    }
    const newest = newestDeploys(repo.clone, Infinity).map((entry) => entry.id);
    expect(newest).toHaveLength(3);
    expect(oldestDeploys(repo.clone, Infinity).map((entry) => entry.id)).toEqual([...newest].reverse());
    expect(oldestDeploys(repo.clone, 1).map((entry) => entry.id)).toEqual([newest.at(-1)!]);
  });
});
