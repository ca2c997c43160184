/**
 * Deploying an exact ref, and retrying (docs/deploy-control.md "Deploy a ref or retry"): `service deploy --ref`
 * and the admin API's `{"ref": …}` deploy a tag, a branch (as the remote has it now), a commit or a deploy id's
 * commit through the same queue, fetching first what the repository does not have yet; the checkout stays on its
 * branch. A ref that names nothing is refused with nothing queued, and `deployRefs` limits what may be named.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { git, logFiles, makeRepo, readJson, runCli, waitFor } from "../_support/helpers.ts";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { deployIdOf, logDirOf, stemOf } from "../_support/ops-helpers.ts";

/**
 * A remote with, besides main: an annotated tag v1.0 on an older commit, and a branch feature; none of them fetched
 * by the clone, which is still at the initial commit.
 */
function remoteWithRefs() {
  const repo = makeRepo();
  const pusher = join(repo.dir, "pusher");
  const tagged = repo.push({ "v.txt": "1.0\n" }, "release 1.0");
  git(pusher, "tag", "-a", "v1.0", "-m", "v1.0");
  git(pusher, "push", "--quiet", "origin", "v1.0");
  const tip = repo.push({ "v.txt": "1.1-dev\n" }, "after the release");
  git(pusher, "checkout", "--quiet", "-b", "feature");
  git(pusher, "commit", "--quiet", "--allow-empty", "-m", "a feature");
  git(pusher, "push", "--quiet", "origin", "feature");
  const feature = git(pusher, "rev-parse", "HEAD");
  git(pusher, "checkout", "--quiet", "main");
  return { repo, initial: repo.head(), tagged, tip, feature };
}

const deploy = (cwd: string, ref: string, env: Record<string, string> = {}) =>
  runCli(["deploy", "--ref", ref], { cwd, env: { SERVICE_RUN_SCRIPT: "true", ...env } });

/** The record of the deploy a `service deploy` printed. */
const recordOf = (cwd: string, output: string) =>
  readJson(join(logDirOf(cwd), `${stemOf(cwd, deployIdOf(output))}.json`));

describe('service deploy --ref (docs/deploy-control.md "Deploy a ref or retry")', () => {
  test("a tag (fetched first), a branch as the remote has it, a commit, and a deploy id (a retry of its commit); the checkout stays on main", async () => {
    const { repo, initial, tagged, tip, feature } = remoteWithRefs();
    const branch = () => git(repo.clone, "symbolic-ref", "--short", "HEAD");

    const tag = await deploy(repo.clone, "v1.0");
    expect(tag.code).toBe(0);
    expect(tag.stdout).toContain(`[pull] ref v1.0: git fetch (${tagged.slice(0, 12)} is not in the repository yet)`);
    expect(tag.stdout).toContain(
      `[pull] ref v1.0: git reset --hard ${tagged.slice(0, 12)} (from ${initial.slice(0, 12)})`,
    );
    expect([repo.head(), branch()]).toEqual([tagged, "main"]);
    const record = recordOf(repo.clone, tag.stdout);
    expect(record).toMatchObject({ trigger: "cli", ref: "v1.0", status: "done" });
    expect(record.result.target).toMatchObject({ commit: tagged, deployId: null, ref: "v1.0", tag: "v1.0" });
    expect(record.result.commit).toMatchObject({ sha: tagged, subject: "release 1.0" });

    const onFeature = await deploy(repo.clone, "feature");
    expect(onFeature.code).toBe(0);
    expect([repo.head(), branch()]).toEqual([feature, "main"]);

    // A commit the repository has, by a prefix; the script fails this time.
    const failed = await deploy(repo.clone, tip.slice(0, 10), { SERVICE_RUN_SCRIPT: "false" });
    expect(failed.code).toBe(1);
    expect(repo.head()).toBe(tip);
    const failedId = deployIdOf(failed.stdout);

    // Back to the tag, then a retry of the failed deploy: its commit again.
    expect((await deploy(repo.clone, "v1.0")).code).toBe(0);
    const retry = await deploy(repo.clone, failedId.slice(0, 8));
    expect(retry.code).toBe(0);
    expect(repo.head()).toBe(tip);
    expect(recordOf(repo.clone, retry.stdout).result.target).toMatchObject({
      commit: tip,
      deployId: failedId,
      ref: failedId.slice(0, 8),
    });
  });

  test("a ref that names nothing is one error line and exit 1, and nothing is queued or logged", async () => {
    const { repo } = remoteWithRefs();
    const before = logFiles(repo.clone);
    for (const ref of ["no-such-thing", "deadbeef42", "-x"]) {
      const run = await runCli(["deploy", `--ref=${ref}`], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: "true" } });
      expect({ ref, code: run.code }).toEqual({ ref, code: 1 });
      expect(run.stderr.trim().split("\n").at(-1)).toMatch(/\[error\] ".*" (names no deploy|is not a ref)/);
    }
    expect(logFiles(repo.clone)).toEqual(before);
  });

  test("deployRefs [main, v*]: a tag matching v* and a deploy id deploy; another branch is refused naming the list", async () => {
    const { repo, feature } = remoteWithRefs();
    const env = { SERVICE_DEPLOY_REFS: "main,v*" };
    const refused = await deploy(repo.clone, "feature", env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('"feature" is not in deployRefs (main, v*)');
    expect(repo.head()).not.toBe(feature);
    const tag = await deploy(repo.clone, "v1.0", env);
    expect(tag.code).toBe(0);
    const again = await deploy(repo.clone, deployIdOf(tag.stdout), env);
    expect(again.code).toBe(0);
  });

  test("deployRefs [main, refs/tags/v*]: a pattern written refs/tags/… matches tags only, so a pushed branch vevil is refused; a bare v* matches both", async () => {
    const { repo, tagged } = remoteWithRefs();
    const pusher = join(repo.dir, "pusher");
    git(pusher, "push", "--quiet", "origin", "HEAD:refs/heads/vevil");
    const tagsOnly = { SERVICE_DEPLOY_REFS: "main,refs/tags/v*" };
    for (const ref of ["vevil", "refs/heads/vevil"]) {
      const branch = await deploy(repo.clone, ref, tagsOnly);
      expect({ ref, code: branch.code }).toEqual({ ref, code: 1 });
      expect(branch.stderr).toContain(`"${ref}" is not in deployRefs (main, refs/tags/v*)`);
    }
    expect(repo.head()).not.toBe(git(pusher, "rev-parse", "HEAD"));
    for (const ref of ["v1.0", "refs/tags/v1.0"]) {
      const tag = await deploy(repo.clone, ref, tagsOnly);
      expect({ ref, code: tag.code }).toEqual({ ref, code: 0 });
      expect(repo.head()).toBe(tagged);
    }
    const headsOnly = { SERVICE_DEPLOY_REFS: "refs/heads/v*" };
    expect((await deploy(repo.clone, "v1.0", headsOnly)).code).toBe(1);
    expect((await deploy(repo.clone, "vevil", headsOnly)).code).toBe(0);
    expect((await deploy(repo.clone, "v1.0", { SERVICE_DEPLOY_REFS: "v*" })).code).toBe(0);
  });
});

describe("the admin API's deploy with a ref", () => {
  test('POST /api/apps/<app>/deploy {"ref"}: deployed with trigger api and the ref recorded; 400 for a ref that names nothing, 403 outside deployRefs', async () => {
    const { repo, tagged } = remoteWithRefs();
    const { server, admin } = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "true", SERVICE_DEPLOY_REFS: "v*" });
    await using _server = server;
    const call = async (body: unknown) => {
      const res = await fetch(`${admin}/api/apps/default/deploy`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    const ok = await call({ ref: "v1.0" });
    expect(ok.status).toBe(200);
    const done = await waitFor(async () => {
      const res = await fetch(`${admin}/api/deploys/${ok.body.id}`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      const record = res.ok ? await res.json() : undefined;
      return record?.status === "done" ? record : undefined;
    }, "the deploy of v1.0 to end");
    expect(done).toMatchObject({ trigger: "api", ref: "v1.0", actor: "admin@127.0.0.1", result: { ok: true } });
    expect(repo.head()).toBe(tagged);

    const unknown = await call({ ref: "v9.9" });
    expect(unknown).toMatchObject({ status: 400, body: { error: "unknown ref" } });
    const outside = await call({ ref: "main" });
    expect(outside).toMatchObject({ status: 403, body: { error: "ref not allowed" } });
    expect(outside.body.message).toContain("deployRefs (v*)");
    expect((await call({ ref: 7 })).status).toBe(400);
  });
});
