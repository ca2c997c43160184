/**
 * Atomic releases end to end (docs/releases.md): the real server, real git worktrees, real scripts; builds and
 * activations counted in files outside the releases.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  counted,
  currentRelease,
  deployStreamed,
  makeReleasesSite,
  recordOf,
  releaseDirs,
} from "../_support/release-helpers.ts";
import { git, lastLine, post, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";

describe('a deploy with releases (docs/releases.md "A deploy with releases")', () => {
  test("each deploy builds its own release of the pulled commit (tracked files only) and `current` follows; the record says which", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n", ".gitignore": "ignored.txt\n" });
    // Files of the clone that are not the commit's: none may reach a release.
    writeFileSync(join(s.repo.clone, "untracked.txt"), "no\n");
    writeFileSync(join(s.repo.clone, "ignored.txt"), "no\n");
    const first = s.repo.head();
    await using server = await startServer(s.cwd, {
      ...s.env,
      SERVICE_RUN_SCRIPT: `sh -c 'echo "$SERVICE_RELEASE_ID $PWD $SERVICE_RELEASE_PATH $SERVICE_CURRENT_PATH" >> ${s.builds}; git rev-parse HEAD > built-commit'`,
    });
    expect(server.stdout.text).toContain(`releases: ${s.site} (keep 5)`);

    const one = await deployStreamed(server.url, s.cwd);
    expect(lastLine(one.text)).toBe("[done] ok=true exitCode=0");
    const id1 = currentRelease(s.site)!;
    expect(id1).toMatch(new RegExp(`^\\d{8}T\\d{6}Z-${first.slice(0, 12)}$`));
    const dir1 = join(s.site, "releases", id1);
    expect(readlinkSync(join(s.site, "current"))).toBe(join("releases", id1));
    expect(readFileSync(join(dir1, "public/index.html"), "utf8")).toBe("v1\n");
    expect(readFileSync(join(dir1, "built-commit"), "utf8").trim()).toBe(first);
    expect(existsSync(join(dir1, "untracked.txt"))).toBe(false);
    expect(existsSync(join(dir1, "ignored.txt"))).toBe(false);
    expect(git(dir1, "rev-parse", "HEAD")).toBe(first);
    // The build ran in the release, with its variables; activate in current.
    expect(readFileSync(s.builds, "utf8").trim()).toBe(`${id1} ${dir1} ${dir1} ${join(s.site, "current")}`);
    expect(counted(s.activations)).toEqual([id1]);
    expect(one.result.release).toEqual({
      id: id1,
      path: dir1,
      commit: first,
      previous: null,
      built: true,
      live: true,
      activate: { exitCode: 0, timedOut: false },
    });
    // The clone stays clean: the build did not write there.
    expect(git(s.repo.clone, "status", "--porcelain", "--untracked-files=no")).toBe("");

    const second = s.repo.push({ "public/index.html": "v2\n" }, "v2");
    const two = await deployStreamed(server.url, s.cwd);
    const id2 = currentRelease(s.site)!;
    expect(id2).not.toBe(id1);
    expect(two.text).toContain(`[release] switched current: ${id1} -> ${id2}`);
    expect(readFileSync(join(s.site, "current", "public/index.html"), "utf8")).toBe("v2\n");
    expect(two.result.release).toMatchObject({ id: id2, commit: second, previous: { id: id1, commit: first } });
    expect(releaseDirs(s.site)).toEqual([id1, id2]);
    expect(counted(s.builds)).toEqual([id1, id2]);
    expect(counted(s.activations)).toEqual([id1, id2]);
    // `service logs` names the release of each deploy.
    const logs = await runCli(["logs"], { cwd: s.cwd });
    expect(logs.stdout).toContain("RELEASE");
    expect(logs.stdout).toContain(id2);
  });

  test("a build that fails removes its release: `current` and its content are untouched, nothing else runs, ok=false", async () => {
    const s = makeReleasesSite(
      { "public/index.html": "good\n" },
      { SERVICE_RUN_SCRIPT: `sh -c 'echo "$SERVICE_RELEASE_ID" >> BUILDS_FILE; test ! -f broken'` },
    );
    s.env.SERVICE_RUN_SCRIPT = s.env.SERVICE_RUN_SCRIPT!.replace("BUILDS_FILE", s.builds);
    await using server = await startServer(s.cwd, { ...s.env, SERVICE_ROLLBACK_ON_FAILURE: "true" });
    await deployStreamed(server.url, s.cwd);
    const live = currentRelease(s.site)!;
    s.repo.push({ "public/index.html": "half\n", broken: "yes\n" }, "breaks the build");
    const failed = await deployStreamed(server.url, s.cwd);
    expect(lastLine(failed.text)).toBe("[done] ok=false exitCode=1");
    const attempted = counted(s.builds)[1]!;
    expect(failed.text).toContain(
      `[release] build failed (exit code 1): removed release ${attempted}; current stays release ${live}`,
    );
    expect(failed.text).not.toContain("[rollback]");
    expect(currentRelease(s.site)).toBe(live);
    expect(readFileSync(join(s.site, "current", "public/index.html"), "utf8")).toBe("good\n");
    expect(releaseDirs(s.site)).toEqual([live]);
    expect(existsSync(join(s.site, "releases", `${attempted}.json`))).toBe(false);
    expect(counted(s.activations)).toEqual([live]);
    expect(failed.result).toMatchObject({ ok: false, rolledBack: false, release: { id: attempted, live: false } });
    // The clone knows no worktree of the removed release.
    expect(git(s.repo.clone, "worktree", "list")).not.toContain(attempted);
  });

  test("a failing health check switches back to the previous release and activates it again: no build, no reset of the clone", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n", healthy: "yes\n" });
    await using server = await startServer(s.cwd, {
      ...s.env,
      SERVICE_ROLLBACK_ON_FAILURE: "true",
      SERVICE_HEALTH_CHECK: "test -f healthy",
      SERVICE_HEALTH_CHECK_TIMEOUT_MS: "400",
      SERVICE_HEALTH_CHECK_INTERVAL_MS: "100",
    });
    await deployStreamed(server.url, s.cwd);
    const good = currentRelease(s.site)!;
    git(join(s.repo.dir, "pusher"), "rm", "-q", "healthy");
    const sick = s.repo.push({}, "removes healthy");
    const { text, result } = await deployStreamed(server.url, s.cwd);
    const bad = counted(s.builds)[1]!;
    expect(text).toContain(`[release] switched current: ${good} -> ${bad}`);
    expect(text).toContain(`[rollback] switching current back to release ${good}`);
    expect(text).toContain(`[release] switched current: ${bad} -> ${good}`);
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(currentRelease(s.site)).toBe(good);
    expect(counted(s.builds)).toEqual([good, bad]);
    expect(counted(s.activations)).toEqual([good, bad, good]);
    expect(result).toMatchObject({
      ok: true,
      rolledBack: true,
      switchedBack: true,
      healthCheck: { ok: false },
      release: { id: bad, live: false, previous: { id: good } },
      rollback: { ok: true, from: sick, healthCheck: { ok: true } },
    });
    // The clone stays at the pushed commit: a switch back moves `current` only.
    expect(s.repo.head()).toBe(sick);
  });

  test("without rollbackOnFailure a failed activate script leaves the new release live and the deploy not ok", async () => {
    const s = makeReleasesSite();
    await using server = await startServer(s.cwd, { ...s.env, SERVICE_ACTIVATE_SCRIPT: "sh -c 'exit 7'" });
    const { text, result } = await deployStreamed(server.url, s.cwd);
    expect(text).toContain("stays live though it failed (rollbackOnFailure is off)");
    expect(lastLine(text)).toBe("[done] ok=false exitCode=0");
    expect(result).toMatchObject({ ok: false, error: "activate script failed: exit code 7", release: { live: true } });
    expect(result.release.activate).toEqual({ exitCode: 7, timedOut: false });
    expect(currentRelease(s.site)).toBe(result.release.id);
  });
});

describe('rollback with releases (docs/releases.md "Rollback")', () => {
  test("a rollback to a kept release is an instant switch: no pull, no build; a pruned one is built again from its commit", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n" }, { SERVICE_RELEASES_KEEP: "2" });
    await using server = await startServer(s.cwd, s.env);
    const first = await deployStreamed(server.url, s.cwd);
    s.repo.push({ "public/index.html": "v2\n" }, "v2");
    const second = await deployStreamed(server.url, s.cwd);
    const [id1, id2] = [first.result.release.id, second.result.release.id];

    // To deploy 1's release, still kept: switched to, activated, no build.
    const back = await runCli(["rollback", first.result.log.id], { cwd: s.cwd, env: s.env });
    expect(back.code).toBe(0);
    expect(back.stdout).toContain(`[release] instant switch: release ${id1}`);
    expect(back.stdout).toContain("no pull, no build");
    expect(back.stdout).not.toContain("[run]");
    expect(back.stdout).not.toContain("[pull] git pull");
    expect(back.stdout).toContain(`[pull] ${id2.slice(-12)} -> ${id1.slice(-12)}`);
    expect(lastLine(back.stdout)).toBe("[done] ok=true exitCode=null");
    expect(currentRelease(s.site)).toBe(id1);
    expect(counted(s.builds)).toEqual([id1, id2]);
    expect(counted(s.activations)).toEqual([id1, id2, id1]);
    // By the release's own id, as the dashboard's "switch back" names it.
    const forward = await runCli(["rollback", id2], { cwd: s.cwd, env: s.env });
    expect(forward.stdout).toContain(`[release] instant switch: release ${id2}`);
    expect(currentRelease(s.site)).toBe(id2);

    // keep 2: two more deploys prune the oldest, never the live one or the one it replaced.
    s.repo.push({ "public/index.html": "v3\n" }, "v3");
    const third = await deployStreamed(server.url, s.cwd);
    // Pruned after its [done] line: the record names it once the pruning ended.
    await waitFor(() => recordOf(s.cwd, third.text).result.release.pruned?.includes(id1), "release 1 pruned");
    s.repo.push({ "public/index.html": "v4\n" }, "v4");
    const fourth = await deployStreamed(server.url, s.cwd);
    const [id3, id4] = [third.result.release.id, fourth.result.release.id];
    await waitFor(() => recordOf(s.cwd, fourth.text).result.release.pruned?.includes(id2), "release 2 pruned");
    expect(releaseDirs(s.site)).toEqual([id3, id4]);
    expect(git(s.repo.clone, "worktree", "list").split("\n")).toHaveLength(3);

    // Deploy 1's release is gone: the rollback builds a new release of its commit.
    const rebuilt = await runCli(["rollback", first.result.log.id], { cwd: s.cwd, env: s.env });
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stdout).toContain("no kept release of");
    // (In the same second as deploy 1, the new release may take the name the pruned one had: same time, same commit.)
    const id5 = currentRelease(s.site)!;
    expect(id5.endsWith(first.result.release.commit.slice(0, 12))).toBe(true);
    expect(readFileSync(join(s.site, "current", "public/index.html"), "utf8")).toBe("v1\n");
    expect(counted(s.builds)).toEqual([id1, id2, id3, id4, id5]);
  });
});

describe('shared paths (docs/releases.md "Shared paths")', () => {
  test("shared entries are links into <path>/shared, made on first use, and what a release writes there persists into the next", async () => {
    const s = makeReleasesSite(
      { "public/index.html": "v1\n", ".env": "TRACKED=1\n" },
      {
        SERVICE_RELEASES_SHARED: ".env,storage/logs/",
        SERVICE_RUN_SCRIPT: `sh -c 'echo "$SERVICE_RELEASE_ID" >> storage/logs/builds; cat .env'`,
      },
    );
    await using server = await startServer(s.cwd, s.env);
    const one = await deployStreamed(server.url, s.cwd);
    expect(lastLine(one.text)).toBe("[done] ok=true exitCode=0");
    expect(one.text.match(/replaces the tracked file \.env/g)).toHaveLength(1);
    expect(one.text).toContain(
      `[release] shared: created ${join(s.site, "shared", "storage/logs")} (an empty directory)`,
    );
    const dir1 = join(s.site, "releases", one.result.release.id);
    expect(lstatSync(join(dir1, ".env")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir1, ".env"))).toBe("../../shared/.env");
    expect(readFileSync(join(s.site, "shared", ".env"), "utf8")).toBe("");

    writeFileSync(join(s.site, "shared", ".env"), "SECRET_KEY=from-shared\n");
    s.repo.push({ "public/index.html": "v2\n" }, "v2");
    const two = await deployStreamed(server.url, s.cwd);
    expect(two.text).toContain("SECRET_KEY=from-shared");
    expect(two.text).not.toContain("[release] shared: created");
    expect(
      readFileSync(join(s.site, "current", "storage/logs/builds"), "utf8")
        .trim()
        .split("\n"),
    ).toEqual([one.result.release.id, two.result.release.id]);
  });

  test("a shared file the service creates is 0600 whatever the umask; check warns about a shared file group or others can read", async () => {
    const s = makeReleasesSite(
      { "public/index.html": "v1\n" },
      { SERVICE_RELEASES_SHARED: ".env,config/app.key,storage/" },
    );
    {
      await using server = await startServer(s.cwd, s.env, [], { umask: "022" });
      expect(lastLine((await deployStreamed(server.url, s.cwd)).text)).toBe("[done] ok=true exitCode=0");
    }
    const shared = join(s.site, "shared");
    for (const file of [".env", "config/app.key"]) expect(statSync(join(shared, file)).mode & 0o777).toBe(0o600);
    const quiet = await runCli(["check"], { cwd: s.cwd, env: s.env });
    expect(quiet.stdout).not.toContain("can be read by other users");
    chmodSync(join(shared, ".env"), 0o640);
    chmodSync(join(shared, "config/app.key"), 0o604);
    const check = await runCli(["check"], { cwd: s.cwd, env: s.env });
    expect(check.code).toBe(0);
    for (const [file, mode] of [
      [".env", "0640"],
      ["config/app.key", "0604"],
    ])
      expect(check.stdout).toContain(
        `warning: ${join(shared, file!)} (shared by releases) can be read by other users (mode ${mode}): run chmod 600 ${join(shared, file!)}`,
      );
    // A shared directory's mode is the app's business (a web server may serve it).
    expect(check.stdout).not.toContain(`${join(shared, "storage")} (shared`);
  });
});

describe('crashes (docs/releases.md "Crashes")', () => {
  test("kill -9 during a build: the next start removes the half-prepared release and says so; current still names the complete one", async () => {
    const s = makeReleasesSite();
    const started = join(s.cwd, "build-started");
    const script = `sh -c 'echo "$SERVICE_RELEASE_ID" >> ${s.builds}; test ! -f hang || { touch ${started}; sleep 30; }'`;
    const server = await startServer(s.cwd, { ...s.env, SERVICE_RUN_SCRIPT: script });
    await deployStreamed(server.url, s.cwd);
    const live = currentRelease(s.site)!;
    s.repo.push({ hang: "yes\n" }, "a build that hangs");
    void post(server.url, { secret: SECRET }).catch(() => {});
    while (!existsSync(started)) await Bun.sleep(20);
    const half = counted(s.builds)[1]!;
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    expect(releaseDirs(s.site)).toEqual([live, half]);

    await using again = await startServer(s.cwd, { ...s.env, SERVICE_RUN_SCRIPT: "true" });
    const said = again.stdout.text + again.stderr.text;
    expect(said).toContain(`removed release ${half}: deploy`);
    expect(said).toContain("was interrupted while preparing or building it");
    expect(releaseDirs(s.site)).toEqual([live]);
    expect(currentRelease(s.site)).toBe(live);
    expect(git(s.repo.clone, "worktree", "list")).not.toContain(half);
  });

  test("kill -9 between the switch and the end of the activate script: the next start finds current naming the complete release and says what happened", async () => {
    const s = makeReleasesSite();
    const activating = join(s.cwd, "activating");
    const activate = `sh -c 'test ! -f hang || { touch ${activating}; sleep 30; }'`;
    const server = await startServer(s.cwd, { ...s.env, SERVICE_ACTIVATE_SCRIPT: activate });
    await deployStreamed(server.url, s.cwd);
    s.repo.push({ hang: "yes\n" }, "an activation that hangs");
    void post(server.url, { secret: SECRET }).catch(() => {});
    while (!existsSync(activating)) await Bun.sleep(20);
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    const live = currentRelease(s.site)!;
    expect(counted(s.builds)[1]).toBe(live);

    await using again = await startServer(s.cwd, s.env);
    const said = again.stdout.text + again.stderr.text;
    expect(said).toContain(`was interrupted between the switch to release ${live} and the end of its activate script`);
    expect(said).toContain(`current names ${live} (complete)`);
    expect(readFileSync(join(s.site, "releases", `${live}.json`), "utf8")).toContain('"state": "complete"');
    expect(existsSync(join(s.site, ".activating.json"))).toBe(false);
  });
});
