/**
 * What is live is what the service says (docs/deploy-control.md "What is live"): with releases, the live release's
 * commit; in place, the commit of the last deploy that ended ok or that a rollback returned to. `service status`,
 * its `--json`, `GET /api/apps` and the records all say the same; a deploy's record names the commit it tried
 * (`target`) apart from what is live after it (`commit`).
 */
import { describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { makeRepo, post, runCli, SECRET, startServer } from "../_support/helpers.ts";
import { currentRelease, deployStreamed, makeReleasesSite, recordOf } from "../_support/release-helpers.ts";

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** `service status --json`'s first app. */
async function statusOf(cwd: string, env: Record<string, string>) {
  const out = await runCli(["status", "--json"], { cwd, env });
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout)[0];
}

/** The table `service logs` prints, as rows of cells by column name. */
async function logRows(cwd: string, env: Record<string, string>): Promise<Record<string, string>[]> {
  const [head, ...lines] = (await runCli(["logs"], { cwd, env })).stdout.trimEnd().split("\n");
  const starts = [...head!.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], at: m.index! }));
  return lines.map((line) =>
    Object.fromEntries(starts.map((c, i) => [c.name, line.slice(c.at, starts[i + 1]?.at).trim()])),
  );
}

describe('what is live (docs/deploy-control.md "What is live")', () => {
  test("with releases, a failed build leaves the live release's commit named everywhere; the record's target is the commit tried", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n", "build.sh": "exit 0\n" });
    s.env.SERVICE_RUN_SCRIPT = "sh build.sh";
    const { server, admin } = await startAdmin(s.cwd, s.env);
    await using _ = server;
    const one = await deployStreamed(server.url, s.cwd);
    expect(one.result.ok).toBe(true);
    const good = one.result.release.commit;
    const broken = s.repo.push({ "build.sh": "exit 4\n" }, "Break the build");
    const two = await deployStreamed(server.url, s.cwd);
    expect(two.result.ok).toBe(false);
    expect(currentRelease(s.site)).toBe(one.result.release.id);

    // The record: live after it is what stayed live; what it tried is the broken commit.
    expect(two.result.commit).toMatchObject({ sha: good });
    expect(two.result.target).toMatchObject({ sha: broken, subject: "Break the build", author: "Test" });
    expect(two.result.previousCommit).toMatchObject({ sha: good });

    // The clone moved on to the broken commit; the live commit did not.
    const status = await statusOf(s.cwd, s.env);
    expect(status.commit).toBe(good);
    expect(status.live).toMatchObject({ sha: good, deployId: one.result.log.id });
    expect(status.checkedOut).toBe(broken);
    const human = (await runCli(["status"], { cwd: s.cwd, env: s.env })).stdout;
    expect(human).toContain(`live:    ${good.slice(0, 12)}`);
    expect(human).toContain(`clone:   ${broken.slice(0, 12)} checked out (not live)`);

    const apps = await (await fetch(`${admin}/api/apps`, { headers: auth })).json();
    expect(apps.apps[0]).toMatchObject({ commit: good, live: { sha: good }, checkedOut: broken });

    // `service logs`: the failed row names the commit it tried, and what stayed live beside it.
    const rows = await logRows(s.cwd, s.env);
    expect(rows[0]!.COMMIT).toBe(`${broken.slice(0, 7)} Break the build (live: ${good.slice(0, 7)})`);
    expect(rows[1]!.COMMIT).toStartWith(good.slice(0, 7));
  });

  test("with releases, a health check that fails after the switch switches back: the live commit is the earlier release's", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n", "health.sh": "exit 0\n" });
    s.env.SERVICE_ROLLBACK_ON_FAILURE = "true";
    s.env.SERVICE_HEALTH_CHECK = "sh health.sh";
    s.env.SERVICE_HEALTH_CHECK_TIMEOUT_MS = "300";
    await using server = await startServer(s.cwd, s.env);
    const one = await deployStreamed(server.url, s.cwd);
    const good = one.result.release.commit;
    const bad = s.repo.push({ "health.sh": "exit 1\n" }, "Unhealthy");
    const two = await deployStreamed(server.url, s.cwd);
    expect(two.result.switchedBack).toBe(true);
    expect(two.result.commit).toMatchObject({ sha: good });
    expect(two.result.target).toMatchObject({ sha: bad });
    expect((await statusOf(s.cwd, s.env)).commit).toBe(good);
  });

  test("in place, a deploy that failed leaves the commit of the last ok deploy live; the clone's HEAD is shown apart", async () => {
    const repo = makeRepo({ "build.sh": "exit 0\n" });
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "sh build.sh" };
    await using server = await startServer(repo.clone, env);
    const first = await (await post(server.url, { secret: SECRET })).text();
    const good = recordOf(repo.clone, first).result.commit.sha;
    const broken = repo.push({ "build.sh": "exit 2\n" }, "Break it");
    const second = recordOf(repo.clone, await (await post(server.url, { secret: SECRET })).text());
    expect(second.result.ok).toBe(false);
    expect(second.result.commit).toMatchObject({ sha: good });
    expect(second.result.target).toMatchObject({ sha: broken, subject: "Break it" });
    const status = await statusOf(repo.clone, env);
    expect(status).toMatchObject({ commit: good, live: { sha: good }, checkedOut: broken });

    // The next deploy that ends ok makes its commit live, and names what was live before it.
    const fixed = repo.push({ "build.sh": "exit 0\n" }, "Fix it");
    const third = recordOf(repo.clone, await (await post(server.url, { secret: SECRET })).text());
    expect(third.result.ok).toBe(true);
    expect(third.result.previousCommit).toMatchObject({ sha: good });
    expect(third.result.commit).toMatchObject({ sha: fixed });
    expect(await statusOf(repo.clone, env)).toMatchObject({ commit: fixed, checkedOut: fixed });
  });
});
