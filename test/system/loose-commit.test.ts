/**
 * A deploy's commit words (docs/log-files.md "Log files": `commit`, `previousCommit`) are read from the commit's
 * loose object when it is one, without a git process: exactly what `git show` says, or nothing (git is asked).
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readLooseCommit } from "../../src/system/gitdir.ts";
import { commitInfos } from "../../src/system/commit-infos.ts";
import { baseEnv, git, makeTempDir } from "../_support/repo.ts";

const MESSAGES: [string, Record<string, string>][] = [
  ["a plain subject", {}],
  ["a subject over\nthree lines   \nof one paragraph\n\nand a body\n", {}],
  ["ünïcödé ✓ in the subject\n\nbody", { GIT_AUTHOR_NAME: "Zoë O'Brien" }],
  ["a zone west of UTC", { GIT_AUTHOR_DATE: "2021-03-04T05:06:07-05:30" }],
  ["a zone east of UTC, past midnight there", { GIT_AUTHOR_DATE: "2021-03-04T23:59:59+14:00" }],
  ["UTC", { GIT_AUTHOR_DATE: "1999-12-31T23:59:59+00:00" }],
  ["\ttabs\tand trailing blanks\t ", {}],
];

describe('commit words from the object files (docs/log-files.md "Log files")', () => {
  test("each loose commit reads as git shows it (subject, author, author date); a packed one is left to git", async () => {
    const dir = makeTempDir("service-loose-");
    git(dir, "init", "--quiet");
    const shas: string[] = [];
    for (const [message, env] of MESSAGES) {
      writeFileSync(join(dir, "file"), `${shas.length}\n`);
      git(dir, "add", "file");
      const result = Bun.spawnSync(["git", "commit", "--quiet", "--cleanup=verbatim", "-m", message], {
        cwd: dir,
        env: baseEnv(env),
      });
      expect(result.exitCode).toBe(0);
      shas.push(git(dir, "rev-parse", "HEAD"));
    }
    for (const sha of shas) {
      // As git prints them (the fixture's git() trims, which would take a leading tab off the subject).
      const shown = Bun.spawnSync(["git", "show", "--no-patch", "--format=%s%x00%an%x00%aI", sha], { cwd: dir });
      const [subject = "", author = "", date = ""] = shown.stdout.toString().replace(/\n$/, "").split("\0");
      expect({ sha, words: await readLooseCommit(dir, sha, {}) }).toEqual({ sha, words: { subject, author, date } });
    }
    // Packed (git gc): not read from the files, and commitInfos still has every one, from git.
    git(dir, "gc", "--quiet");
    expect(await readLooseCommit(dir, shas[0]!, {})).toBeUndefined();
    const found = await commitInfos(dir, shas, baseEnv());
    expect(shas.filter((sha) => found.get(sha)?.subject === undefined)).toEqual([]);
  });
});
