/** Reading HEAD and remotes from `.git` must agree with git itself, and step aside whenever it cannot be sure. */
import { describe, expect, test } from "bun:test";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { readHasRemote, readHead } from "../../src/system/gitdir.ts";
import { git, makeLocalRepo, makeRepo, tempDir } from "../_support/helpers.ts";

const env = {};

describe("HEAD and remotes from the repository's files", () => {
  test("a fresh clone: HEAD as git sees it, and a remote", () => {
    const repo = makeRepo();
    expect(readHead(repo.clone, env)).toBe(git(repo.clone, "rev-parse", "HEAD"));
    expect(readHasRemote(repo.clone, env)).toBe(true);
  });

  test("after a pull, and with every ref packed", () => {
    const repo = makeRepo();
    const pushed = repo.push({ "x.txt": "x\n" });
    git(repo.clone, "pull", "--quiet");
    expect(readHead(repo.clone, env)).toBe(pushed);
    git(repo.clone, "pack-refs", "--all");
    expect(readHead(repo.clone, env)).toBe(pushed);
  });

  test("a detached HEAD", () => {
    const repo = makeRepo();
    const first = repo.head();
    repo.push({ "y.txt": "y\n" });
    git(repo.clone, "pull", "--quiet");
    git(repo.clone, "checkout", "--quiet", "--detach", first);
    expect(readHead(repo.clone, env)).toBe(first);
  });

  test("a repository without commits has no HEAD commit; one without a remote has no remote", () => {
    const dir = join(tempDir(), "empty");
    git(tempDir(), "init", "--quiet", dir);
    expect(readHead(dir, env)).toBeNull();
    expect(readHasRemote(makeLocalRepo(), env)).toBe(false);
  });

  test("unsure cases are left to git: a linked worktree, GIT_DIR in the environment, a config include, not a repository", () => {
    const repo = makeRepo();
    const worktree = join(tempDir(), "wt");
    git(repo.clone, "worktree", "add", "--quiet", "--detach", worktree);
    expect(readHead(worktree, env)).toBeUndefined();
    expect(readHead(repo.clone, { GIT_DIR: "/elsewhere" })).toBeUndefined();
    appendFileSync(join(repo.clone, ".git", "config"), "[include]\n\tpath = extra\n");
    expect(readHasRemote(repo.clone, env)).toBeUndefined();
    expect(readHead(tempDir(), env)).toBeUndefined();
  });
});
