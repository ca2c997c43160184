/**
 * The exit code of `service deploy` and `service rollback` (docs/cli.md "Exit codes"): 0 when what was asked for
 * is live, 1 when the deploy failed, 3 when it failed and was rolled back. The stream's last line keeps the
 * spec's `ok=true` for a successful rollback; a CI step needs the exit code to notice.
 */
import { describe, expect, test } from "bun:test";
import { lastLine, makeRepo, runCli } from "../_support/helpers.ts";

const env = { SERVICE_RUN_SCRIPT: "sh check.sh", SERVICE_ROLLBACK_ON_FAILURE: "true" };

describe('exit codes of service deploy and service rollback (docs/cli.md "Exit codes")', () => {
  test("a deploy that failed and was rolled back ends its stream with ok=true and exits 3; a rollback to a failing commit too", async () => {
    const repo = makeRepo({ "check.sh": "exit 0\n" });
    const good = await runCli(["deploy"], { cwd: repo.clone, env });
    expect({ code: good.code, last: lastLine(good.stdout) }).toEqual({ code: 0, last: "[done] ok=true exitCode=0" });

    const goodCommit = repo.head();
    const bad = repo.push({ "check.sh": "exit 1\n" });
    const rolled = await runCli(["deploy"], { cwd: repo.clone, env });
    expect(lastLine(rolled.stdout)).toStartWith("[done] ok=true");
    expect(rolled.code).toBe(3);
    expect(repo.head()).toBe(goodCommit);

    const back = await runCli(["rollback", bad], { cwd: repo.clone, env });
    expect(lastLine(back.stdout)).toStartWith("[done] ok=true");
    expect(back.code).toBe(3);
    expect(repo.head()).toBe(goodCommit);
  });

  test("without rollbackOnFailure a failed deploy exits 1", async () => {
    const repo = makeRepo({ "check.sh": "exit 0\n" });
    repo.push({ "check.sh": "exit 1\n" });
    const failed = await runCli(["deploy"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: "sh check.sh" } });
    expect(lastLine(failed.stdout)).toBe("[done] ok=false exitCode=1");
    expect(failed.code).toBe(1);
  });
});
