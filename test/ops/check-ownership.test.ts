/**
 * `service check` on a repository owned by another user (docs/cli.md "CLI"): git refuses to work in it
 * ("dubious ownership"), and the check names that refusal and its fixes instead of "not a git repository".
 */
import { describe, expect, test } from "bun:test";
import { chownSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, runCli, tempDir } from "../_support/helpers.ts";

const NOBODY = 65534;

/** Gives `dir` and everything under it to another user, as a repository cloned by someone else is. */
function chownTree(dir: string, uid: number): void {
  chownSync(dir, uid, uid);
  if (!statSync(dir).isDirectory()) return;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) chownTree(path, uid);
    else chownSync(path, uid, uid);
  }
}

describe("service check: a repository owned by another user", () => {
  // Changing a file's owner needs root; git's refusal depends on it.
  test.skipIf(process.getuid?.() !== 0)(
    "names git's ownership refusal and the fix (safe.directory, or run as the owner), not 'not a git repository'",
    async () => {
      const repo = makeRepo();
      chownTree(repo.clone, NOBODY);
      const cwd = tempDir("service-home-");
      writeFileSync(join(cwd, "service.yaml"), `repoPath: ${repo.clone}\nrunScript: echo hi\n`);
      // A home of its own: no safe.directory from the user's global git config.
      const result = await runCli(["check"], { cwd, env: { HOME: tempDir("service-home-") } });
      expect(result.code).toBe(1);
      expect(result.stdout).not.toContain("not a git repository");
      const problem = result.stdout.split("\n").find((line) => line.startsWith("  - "))!;
      expect(problem).toContain(`owned by another user (uid ${NOBODY})`);
      expect(problem).toContain("dubious ownership");
      expect(problem).toContain(`git config --global --add safe.directory ${repo.clone}`);
      expect(problem).toContain("run the service as the repository's owner");
    },
  );
});
