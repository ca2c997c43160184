/**
 * docs/log-files.md "DORA figures": a deploy that rolled itself back is restored from when its failed commit went
 * live (the start of its run phase, in place) to the end of its rollback, as its real record's phases say.
 */
import { describe, expect, test } from "bun:test";
import { readDora } from "../../src/history/dora-read.ts";
import { deployRecords, writeServiceYaml } from "../_support/webhook-fixtures.ts";
import { makeRepo, runCli, tempDir } from "../_support/helpers.ts";

describe("the time to restore of a real rolled-back deploy", () => {
  test("in place: from the start of its run phase to the end of its rollback phase", async () => {
    const repo = makeRepo({ "build.sh": "exit 0\n" });
    const cwd = tempDir("service-restore-");
    writeServiceYaml(cwd, { repoPath: repo.clone, runScript: "sh build.sh", rollbackOnFailure: true });
    expect((await runCli(["deploy"], { cwd })).code).toBe(0);
    repo.push({ "build.sh": "exit 1\n" }, "break the build");
    await runCli(["deploy"], { cwd });
    const record = deployRecords(cwd).find((r) => r.result?.rolledBack === true);
    expect(record).toBeDefined();
    const phases = record.result.phases as { name: string; startedAt: string; ms: number }[];
    const run = phases.find((p) => p.name === "run")!;
    const back = phases.find((p) => p.name === "rollback")!;
    expect(run && back).toBeTruthy();
    const expected = (Date.parse(back.startedAt) + back.ms - Date.parse(run.startedAt)) / 1000;
    expect(expected).toBeGreaterThan(0);
    const { figures } = readDora(cwd, ["default"], 7);
    expect(figures[0]!.timeToRestore).toMatchObject({ value: expected, deploys: 1, unrestored: 0 });
  }, 60_000);
});
