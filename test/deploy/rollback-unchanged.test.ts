import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { lastLine, makeRepo, post, SECRET, startServer, tempDir } from "../_support/helpers.ts";

describe('rollback (docs/deploy-control.md "Rollback")', () => {
  test("when the pull changed nothing there is nothing to roll back to: the rollback is skipped and said, the script runs once", async () => {
    const repo = makeRepo();
    const runs = join(tempDir(), "runs");
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_ROLLBACK_ON_FAILURE: "true",
      SERVICE_RUN_SCRIPT: `sh -c 'echo run >> ${runs}; exit 4'`,
    });
    const text = await (await post(server.url, { secret: SECRET })).text();
    expect(text).toContain("[rollback] skipped: the pull changed nothing");
    expect(lastLine(text)).toBe("[done] ok=false exitCode=4");
    expect(readFileSync(runs, "utf8")).toBe("run\n");
    const result = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(result.rollback).toBeUndefined();
    expect(result.rolledBack).toBe(false);
    expect(result.ok).toBe(false);
    expect(readFileSync(runs, "utf8")).toBe("run\nrun\n");
  });
});
