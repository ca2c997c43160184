/**
 * Releases and bad input or faults (docs/releases.md "Bad input and faults"): a releases directory that cannot
 * be used fails the deploy before anything is pulled or built; a full disk (a small tmpfs, mounted for real)
 * removes the release and leaves `current` alone.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { counted, currentRelease, deployStreamed, makeReleasesSite, releaseDirs } from "../_support/release-helpers.ts";
import { git, lastLine, startServer } from "../_support/helpers.ts";

/** Mounts a tmpfs of `size` at `dir` (root only); false where that is not possible. */
function mountTmpfs(dir: string, options: string): boolean {
  if (process.getuid?.() !== 0) return false;
  return Bun.spawnSync(["mount", "-t", "tmpfs", "-o", options, "tmpfs", dir]).exitCode === 0;
}
const unmount = (dir: string) => Bun.spawnSync(["umount", "-l", dir]);

const canMount = (() => {
  const probe = join(tmpdir(), `service-mount-probe-${process.pid}`);
  mkdirSync(probe, { recursive: true });
  const ok = mountTmpfs(probe, "size=1m");
  if (ok) unmount(probe);
  rmSync(probe, { recursive: true, force: true });
  if (!ok)
    console.warn("cannot mount a tmpfs (not root, or no mount in this container): the full-disk tests are skipped");
  return ok;
})();

describe('a releases directory that cannot be used (docs/releases.md "Bad input and faults")', () => {
  test("a missing releases.path fails the deploy before the pull, naming the path and what to do", async () => {
    const s = makeReleasesSite();
    rmSync(s.site, { recursive: true });
    const before = s.repo.head();
    s.repo.push({ "x.txt": "x\n" });
    await using server = await startServer(s.cwd, s.env);
    const { text, result } = await deployStreamed(server.url, s.cwd);
    expect(text).toContain(
      `[release] failed: releases.path ${s.site} does not exist: create it, owned by the service's user (mkdir -p ${s.site})`,
    );
    expect(lastLine(text)).toBe("[done] ok=false exitCode=null");
    expect(text).not.toContain("[pull]");
    expect(s.repo.head()).toBe(before);
    expect(result.error).toContain("does not exist");
    expect(counted(s.builds)).toEqual([]);
  });

  test("a `current` that is a real directory (a site served from there before) is not replaced: the deploy says how to move it over", async () => {
    const s = makeReleasesSite();
    mkdirSync(join(s.site, "current"));
    await using server = await startServer(s.cwd, s.env);
    const { text } = await deployStreamed(server.url, s.cwd);
    expect(text).toContain(
      `${join(s.site, "current")} is a directory, not a link to a release: move the site under ${join(s.site, "releases")} once`,
    );
    expect(lastLine(text)).toBe("[done] ok=false exitCode=null");
    expect(releaseDirs(s.site)).toEqual([]);
    expect(counted(s.builds)).toEqual([]);
  });

  test.skipIf(!canMount)(
    "a releases.path the service cannot write (a read-only file system) fails the deploy before anything is built",
    async () => {
      const s = makeReleasesSite();
      expect(mountTmpfs(s.site, "ro,size=1m")).toBe(true);
      try {
        await using server = await startServer(s.cwd, s.env);
        const { text } = await deployStreamed(server.url, s.cwd);
        expect(text).toContain(`[release] failed: releases.path ${s.site} is not writable by the service's user`);
        expect(counted(s.builds)).toEqual([]);
      } finally {
        unmount(s.site);
      }
    },
  );
});

describe('a full disk (docs/releases.md "Bad input and faults")', () => {
  test.skipIf(!canMount)(
    "while preparing or while building: the release is removed, `current` is untouched, the log says why",
    async () => {
      const s = makeReleasesSite(
        { "public/index.html": "v1\n" },
        {
          SERVICE_RUN_SCRIPT: `sh -c 'echo "$SERVICE_RELEASE_ID" >> BUILDS; test ! -f big || head -c 3000000 /dev/zero > out.bin'`,
        },
      );
      s.env.SERVICE_RUN_SCRIPT = s.env.SERVICE_RUN_SCRIPT!.replace("BUILDS", s.builds);
      expect(mountTmpfs(s.site, "size=2m")).toBe(true);
      try {
        await using server = await startServer(s.cwd, s.env);
        const good = await deployStreamed(server.url, s.cwd);
        expect(lastLine(good.text)).toBe("[done] ok=true exitCode=0");
        const live = currentRelease(s.site)!;

        // A commit too large for the disk: the checkout itself fails.
        s.repo.push({ "public/index.html": "v2\n", "huge.bin": "x".repeat(3_000_000) }, "too large");
        const prepare = await deployStreamed(server.url, s.cwd);
        // git says which files it could not write; the service, that the release is gone and current stays.
        expect(prepare.text).toContain("error: unable to write file huge.bin");
        expect(prepare.text).toMatch(
          new RegExp(
            `\\[release\\] failed: git worktree add failed: exit code \\d+.*; removed release \\S+; current stays release ${live}`,
          ),
        );
        expect(lastLine(prepare.text)).toBe("[done] ok=false exitCode=null");
        expect(currentRelease(s.site)).toBe(live);
        expect(releaseDirs(s.site)).toEqual([live]);

        // A build that fills the disk: its release is removed.
        git(join(s.repo.dir, "pusher"), "rm", "-q", "huge.bin");
        s.repo.push({ big: "yes\n" }, "a build that writes too much");
        const build = await deployStreamed(server.url, s.cwd);
        expect(build.text).toContain("No space left on device");
        const attempted = counted(s.builds)[1]!;
        expect(build.text).toContain(
          `[release] build failed (exit code 1; the file system of ${join(s.site, "releases", attempted)} is full: `,
        );
        expect(build.text).toContain(`removed release ${attempted}; current stays release ${live}`);
        expect(currentRelease(s.site)).toBe(live);
        expect(readFileSync(join(s.site, "current", "public/index.html"), "utf8")).toBe("v1\n");
        expect(releaseDirs(s.site)).toEqual([live]);
        expect(git(s.repo.clone, "worktree", "list").split("\n")).toHaveLength(2);
      } finally {
        unmount(s.site);
      }
    },
  );
});
