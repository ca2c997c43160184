/**
 * What goes live is what was pushed (docs/deploy-control.md "What was pushed"): with `branch` set, a checkout
 * left on another branch is refused before anything runs, and after the pull HEAD must be the commit the
 * delivery names, or a descendant of it. A form-encoded body that holds JSON is read as JSON for the filter.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { git, lastLine, makeRepo, post, runCli, SECRET, startServer } from "../_support/helpers.ts";
import {
  atCommit,
  bitbucketHeaders,
  bitbucketPush,
  deployRecords,
  githubHeaders,
  githubPush,
  gitlabHeaders,
  gitlabPush,
  hmacHex,
  writeServiceYaml,
} from "../_support/webhook-fixtures.ts";

const MARKER = "ran.txt";

/** A repository whose service deploys branch main only, with a script that leaves a marker when it runs. */
function mainOnly() {
  const repo = makeRepo();
  writeServiceYaml(repo.clone, { branch: "main", runScript: `touch ${MARKER}` });
  return { repo, ran: () => existsSync(join(repo.clone, MARKER)) };
}

describe('a checkout on another branch (docs/deploy-control.md "What was pushed")', () => {
  test("a clone left on dev is refused before anything runs, whoever asks: ok=false, both branches and the fix named; service check reports it", async () => {
    const { repo, ran } = mainOnly();
    git(repo.clone, "checkout", "--quiet", "-b", "dev");
    const devHead = repo.head();
    repo.push({ "new.txt": "on main\n" }, "pushed to main");
    const fix = `git -C ${repo.clone} checkout main`;
    {
      await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
      const res = await post(`${server.url}/?format=json`, { secret: SECRET });
      const result = await res.json();
      expect(result.ok).toBe(false);
      expect(result.run.exitCode).toBeNull();
      expect(result.error).toBe(
        `the checkout in ${repo.clone} is on branch dev, but this app deploys branch main: run ${fix}, then deploy again`,
      );
      const streamed = await (await post(server.url, { secret: SECRET })).text();
      expect(streamed).toContain("[deploy] refused: the checkout");
      expect(lastLine(streamed)).toBe("[done] ok=false exitCode=null");
    }
    const cli = await runCli(["deploy"], { cwd: repo.clone });
    expect(cli.code).toBe(1);
    expect(cli.stdout).toContain("is on branch dev, but this app deploys branch main");
    // Nothing ran: no pull (dev is where it was), no script.
    expect(repo.head()).toBe(devHead);
    expect(ran()).toBe(false);

    const check = await runCli(["check"], { cwd: repo.clone });
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`is on branch dev, but branch is main: every deploy is refused until ${fix}`);

    git(repo.clone, "checkout", "--quiet", "main");
    expect((await runCli(["check"], { cwd: repo.clone })).stdout).toContain("no problems found");
    expect((await runCli(["deploy"], { cwd: repo.clone })).code).toBe(0);
    expect(ran()).toBe(true);
  });
});

describe("the pushed commit, checked after the pull", () => {
  test("GitHub, GitLab and Bitbucket pushes: HEAD is the pushed commit, or contains it, and deploys; a pushed commit the pull did not bring is refused and runs nothing", async () => {
    const { repo, ran } = mainOnly();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
    const first = repo.push({ "a.txt": "a\n" }, "first");
    const second = repo.push({ "b.txt": "b\n" }, "second");

    // The delivery names a commit that is nowhere: the remote pulled from is not the one the forge delivered for.
    const elsewhere = JSON.stringify(githubPush());
    const refused = await post(`${server.url}/?format=json`, {
      headers: { ...githubHeaders(), "x-hub-signature-256": `sha256=${hmacHex(SECRET, elsewhere)}` },
      body: elsewhere,
    });
    const result = await refused.json();
    expect(result.ok).toBe(false);
    expect(result.error).toStartWith("the pushed commit 6113728f27ae is not in the repository after the pull");
    expect(ran()).toBe(false);
    expect(deployRecords(repo.clone)[0].pushed).toBe("6113728f27ae82c7b1a177c8d03f9e96e0adf246");

    // GitLab names the first of the two commits: HEAD (the second) contains it.
    const gitlab = await post(server.url, {
      headers: { ...gitlabHeaders(), "x-gitlab-token": SECRET },
      body: JSON.stringify(atCommit(gitlabPush(), first)),
    });
    const text = await gitlab.text();
    expect(text).toContain(`[pull] HEAD ${second.slice(0, 12)} contains the pushed commit ${first.slice(0, 12)}`);
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(ran()).toBe(true);

    // Bitbucket names HEAD itself.
    const bitbucket = await post(server.url, {
      headers: { ...bitbucketHeaders(), "x-service-secret": SECRET },
      body: JSON.stringify(atCommit(bitbucketPush("main"), second)),
    });
    const said = await bitbucket.text();
    expect(said).toContain(`[pull] HEAD is the pushed commit ${second.slice(0, 12)}`);
    expect(lastLine(said)).toBe("[done] ok=true exitCode=0");

    // A commit that exists but is not in HEAD's history (a force push replaced it).
    git(repo.clone, "branch", "side", first);
    git(repo.clone, "checkout", "--quiet", "side");
    git(repo.clone, "commit", "--quiet", "--allow-empty", "-m", "side");
    const sideCommit = repo.head();
    git(repo.clone, "checkout", "--quiet", "main");
    const replaced = await (
      await post(`${server.url}/?format=json`, {
        headers: { ...githubHeaders(), "x-service-secret": SECRET },
        body: JSON.stringify(atCommit(githubPush(), sideCommit)),
      })
    ).json();
    expect(replaced.ok).toBe(false);
    expect(replaced.error).toStartWith(
      `HEAD ${second.slice(0, 12)} does not contain the pushed commit ${sideCommit.slice(0, 12)}`,
    );
  });

  test("a form-encoded body that holds JSON (curl -d '{…}') is read as JSON: a push to dev is skipped with branch: main", async () => {
    const { repo, ran } = mainOnly();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
    const res = await post(server.url, {
      secret: SECRET,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: '{"ref":"refs/heads/dev"}',
    });
    expect(await res.text()).toBe("[skipped] push to branch dev (refs/heads/dev); this app deploys branch main only\n");
    expect(deployRecords(repo.clone)).toEqual([]);
    expect(ran()).toBe(false);
  });
});
