/**
 * A deploy of the commit already live (docs/releases.md "A deploy of the live commit"): a push that changed nothing
 * and `service deploy --ref <the live commit>` do the same, build a new release of it; and pruning keeps releases of
 * distinct commits first, so `keep` commits stay to switch back to however often one was built again.
 */
import { describe, expect, test } from "bun:test";
import { lastLine, runCli, startServer } from "../_support/helpers.ts";
import { counted, currentRelease, deployStreamed, makeReleasesSite, releaseDirs } from "../_support/release-helpers.ts";

describe('a deploy of the live commit (docs/releases.md "A deploy of the live commit")', () => {
  test("a push that changed nothing and --ref <live commit> both build a new release; pruning keeps an earlier commit to roll back to", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n" }, { SERVICE_RELEASES_KEEP: "2" });
    await using server = await startServer(s.cwd, s.env);
    const first = await deployStreamed(server.url, s.cwd);
    const v2 = s.repo.push({ "public/index.html": "v2\n" }, "v2");
    const second = await deployStreamed(server.url, s.cwd);
    // Nothing pushed: the run script builds again, in a release of its own.
    const again = await deployStreamed(server.url, s.cwd);
    expect(again.result.ok).toBe(true);
    expect(again.result.release).toMatchObject({ commit: v2, built: true, live: true });
    // The same commit by ref: the same, never a re-activation of the live release alone.
    const byRef = await runCli(["deploy", "--ref", v2], { cwd: s.cwd, env: s.env });
    expect(lastLine(byRef.stdout)).toBe("[done] ok=true exitCode=0");
    expect(byRef.stdout).toContain("[run]");
    expect(byRef.stdout).not.toContain("instant switch");
    const builds = counted(s.builds);
    expect(builds).toHaveLength(4);
    expect(currentRelease(s.site)).toBe(builds[3]!);

    // keep 2: the newest release of v2 (live), v1's (the earlier commit), and the one the live one replaced.
    const id1 = first.result.release.id;
    expect(releaseDirs(s.site)).toEqual([id1, builds[2]!, builds[3]!]);
    expect(releaseDirs(s.site)).not.toContain(second.result.release.id);
    // So v1 is still an instant switch away.
    const back = await runCli(["rollback", first.result.log.id], { cwd: s.cwd, env: s.env });
    expect(back.stdout).toContain(`[release] instant switch: release ${id1}`);
    expect(currentRelease(s.site)).toBe(id1);
  });
});
