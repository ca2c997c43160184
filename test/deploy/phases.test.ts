/**
 * docs/log-files.md "Phases": a deploy's record says where its time went: the wait in the queue, then each phase
 * as its lines mark it; `service logs <id>` prints them in one line beside the transcript.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, CLI, makeRepo, runCli, waitFor } from "../_support/helpers.ts";
import { noPty, plain } from "../_support/pty.ts";
import { deployRecords } from "../_support/webhook-fixtures.ts";

describe("phases", () => {
  test("the record lists the queue wait, pull, run and health check with their times; service logs prints them", async () => {
    const repo = makeRepo();
    const env = { SERVICE_RUN_SCRIPT: "sleep 0.3", SERVICE_HEALTH_CHECK: "true" };
    expect((await runCli(["deploy"], { cwd: repo.clone, env })).code).toBe(0);
    const [record] = deployRecords(repo.clone);
    const phases = record.result.phases as { name: string; startedAt: string; ms: number }[];
    expect(phases.map((p) => p.name)).toEqual(["queue", "pull", "run", "health"]);
    // A lower bound only: the script sleeps 0.3 s, so its phase cannot be shorter.
    expect(phases[2]!.ms).toBeGreaterThanOrEqual(300);
    for (const phase of phases) expect(Date.parse(phase.startedAt)).toBeGreaterThan(0);
    const total = phases.reduce((sum, p) => sum + p.ms, 0);
    expect(total).toBeLessThanOrEqual(record.durationMs + phases[0]!.ms);
    // Into a pipe: the transcript alone; the phases are in --json.
    const piped = await runCli(["logs", record.id.slice(0, 8)], { cwd: repo.clone, env });
    expect(piped.stderr).toBe("");
    expect(piped.stdout.trimEnd().endsWith("[done] ok=true exitCode=0")).toBe(true);
    const json = JSON.parse((await runCli(["logs", record.id.slice(0, 8), "--json"], { cwd: repo.clone, env })).stdout);
    expect(json.result.phases).toEqual(phases);
    // At a terminal, one line after the transcript.
    if (noPty) return console.warn("the terminal part of the phases test skipped: no script(1) here");
    const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
    const command = [...CLI, "logs", record.id.slice(0, 8)].map(quote).join(" ");
    const tty = Bun.spawnSync(["script", "-qfec", command, "/dev/null"], { cwd: repo.clone, env: baseEnv(env) });
    expect(plain(tty.stdout.toString())).toMatch(
      /^phases: queue \d+\.\d s · pull \d+\.\d s · run \d+\.\d s · health \d+\.\d s$/m,
    );
  });

  test("a running deploy's record lists the phases that ended so far", async () => {
    const repo = makeRepo();
    const env = { SERVICE_RUN_SCRIPT: "while [ ! -e go ]; do sleep 0.05; done" };
    const run = runCli(["deploy"], { cwd: repo.clone, env });
    const record = await waitFor(() => {
      const [found] = deployRecords(repo.clone);
      return found?.status === "running" && found.phases?.length === 2 ? found : undefined;
    }, "the running record to list the queue and the pull");
    expect(record.phases.map((p: { name: string }) => p.name)).toEqual(["queue", "pull"]);
    expect(record.result).toBeUndefined();
    writeFileSync(join(repo.clone, "go"), "");
    expect((await run).code).toBe(0);
    const [done] = deployRecords(repo.clone);
    expect(done.phases).toBeUndefined();
    expect(done.result.phases.map((p: { name: string }) => p.name)).toEqual(["queue", "pull", "run"]);
  });
});
