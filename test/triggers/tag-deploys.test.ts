/**
 * What a tag deploy gives the script (docs/forges.md "Tag pushes"): the tag fetched into the clone (`git describe`
 * names it), SERVICE_TAG, and SERVICE_REF for every deploy. With `tags` and `branch`, a deploy naming no ref
 * deploys the highest tag in range that is on the branch: one off the branch is named in a `[warn]` line, never
 * chosen, and never blocks the ones that are on it.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { git, makeRepo, post, type Repo, runCli, SECRET, startServer } from "../_support/helpers.ts";
import { deployRecords, githubPush } from "../_support/webhook-fixtures.ts";

const pusherOf = (repo: Repo) => join(repo.dir, "pusher");

/** A new commit on main (pushed), tagged `name` (annotated, pushed); returns the commit. */
function release(repo: Repo, name: string): string {
  repo.push({ "version.txt": `${name}\n` }, `release ${name}`);
  git(pusherOf(repo), "tag", "-a", name, "-m", name);
  git(pusherOf(repo), "push", "--quiet", "origin", `refs/tags/${name}`);
  return git(pusherOf(repo), "rev-parse", "HEAD");
}

/** A commit on a branch `unmerged` (pushed), tagged `name`; main stays where it was. */
function unmergedRelease(repo: Repo, name: string): string {
  const pusher = pusherOf(repo);
  git(pusher, "checkout", "--quiet", "-b", `unmerged-${name}`);
  git(pusher, "commit", "--quiet", "--allow-empty", "-m", `not reviewed ${name}`);
  git(pusher, "tag", "-a", name, "-m", name);
  git(pusher, "push", "--quiet", "origin", `unmerged-${name}`, `refs/tags/${name}`);
  const commit = git(pusher, "rev-parse", "HEAD");
  git(pusher, "checkout", "--quiet", "main");
  return commit;
}

const SCRIPT = 'echo "tag=[$SERVICE_TAG] ref=[$SERVICE_REF] describe=[$(git describe --tags --exact-match)]"';

async function deliver(url: string, ref: string) {
  const response = await post(url, {
    headers: { "x-service-secret": SECRET, "x-github-event": "push", "content-type": "application/json" },
    body: JSON.stringify(githubPush(ref)),
  });
  return response.text();
}

describe("a tag deploy's words for the script", () => {
  test("the tag is in the clone for git describe; SERVICE_TAG and SERVICE_REF name it; a branch deploy's SERVICE_REF is its branch", async () => {
    const repo = makeRepo();
    release(repo, "v1.0.0");
    const env = { SERVICE_SECRET: SECRET, SERVICE_TAGS: "v*", SERVICE_BRANCH: "main", SERVICE_RUN_SCRIPT: SCRIPT };
    await using server = await startServer(repo.clone, env);
    const text = await deliver(server.url, "refs/tags/v1.0.0");
    expect(text).toContain("[done] ok=true");
    expect(text).toContain("tag=[v1.0.0] ref=[refs/tags/v1.0.0] describe=[v1.0.0]");

    const cli = await runCli(["deploy", "--ref", "v1.0.0"], {
      cwd: repo.clone,
      env: { SERVICE_RUN_SCRIPT: 'echo "tag=[$SERVICE_TAG] ref=[$SERVICE_REF]"' },
    });
    expect(cli.stdout).toContain("tag=[v1.0.0] ref=[refs/tags/v1.0.0]");
  });

  test("a deploy by pull: SERVICE_REF is the branch checked out, SERVICE_TAG is empty whatever the service's environment says", async () => {
    const repo = makeRepo();
    repo.push({ "a.txt": "a\n" }, "on main");
    const cli = await runCli(["deploy"], {
      cwd: repo.clone,
      env: { SERVICE_TAG: "v9.9.9", SERVICE_RUN_SCRIPT: 'echo "tag=[$SERVICE_TAG] ref=[$SERVICE_REF]"' },
    });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain("tag=[] ref=[refs/heads/main]");
  });
});

describe("tags with branch: a deploy that names no ref", () => {
  test("an in-range tag on an unmerged branch is named in one [warn] line and the highest tag on the branch deploys", async () => {
    const repo = makeRepo();
    const v141 = release(repo, "v1.4.1");
    unmergedRelease(repo, "v1.5.0");
    unmergedRelease(repo, "v1.6.0");
    const env = { SERVICE_TAGS: "^1.4", SERVICE_BRANCH: "main", SERVICE_RUN_SCRIPT: "true" };
    const deployed = await runCli(["deploy"], { cwd: repo.clone, env });
    expect(deployed.stderr + deployed.stdout).not.toContain("[error]");
    expect(deployed.code).toBe(0);
    expect(repo.head()).toBe(v141);
    const warnings = deployed.stdout.split("\n").filter((line) => line.startsWith("[warn]"));
    expect(warnings).toEqual(["[warn] tags in ^1.4 but not on main, not deployed: v1.6.0, v1.5.0"]);
    expect(deployRecords(repo.clone).at(-1)).toMatchObject({ ref: "refs/tags/v1.4.1" });
  });

  test("the highest tag on the branch lower than the live tag: nothing deploys, and it says so", async () => {
    const repo = makeRepo();
    release(repo, "v1.4.1");
    const env = { SERVICE_TAGS: "^1.4", SERVICE_BRANCH: "main", SERVICE_RUN_SCRIPT: "true" };
    const v142 = unmergedRelease(repo, "v1.4.2");
    // v1.4.2 is live (deployed by name, as an operator may), though it is not on main.
    expect((await runCli(["deploy", "--ref", "v1.4.2"], { cwd: repo.clone, env })).code).toBe(0);
    expect(repo.head()).toBe(v142);
    // A request naming no ref (curl without a body): the highest tag on main is v1.4.1, lower than the live one.
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, ...env });
    const again = await (await post(server.url, { secret: SECRET })).text();
    expect(again).toContain("[skipped] tag v1.4.1 is lower than v1.4.2, which is live");
    expect(repo.head()).toBe(v142);
    expect(deployRecords(repo.clone)).toHaveLength(1);
  });
});
