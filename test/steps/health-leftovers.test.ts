/**
 * The health check's command runs like the run script (its own process group), but it must leave nothing
 * running: after each attempt what it left is stopped and named, in its group or outside it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { logFiles, makeRepo, readJson, runCli } from "../_support/helpers.ts";

/** Live processes whose environment holds `NAME=value`. */
function marked(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      if (`\0${readFileSync(`/proc/${name}/environ`, "latin1")}`.includes(`\0${marker}\0`)) found.push(Number(name));
    } catch {}
  }
  return found;
}

const leftovers: number[] = [];
afterAll(() => {
  for (const pid of leftovers) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
});

describe('health check command: nothing it starts outlives its attempt (docs/deploy-control.md "Health check")', () => {
  test("a check that leaves a child in its group and a setsid daemon: both stopped after every attempt and named in the log", async () => {
    const repo = makeRepo();
    const out = await runCli(["deploy"], {
      cwd: repo.clone,
      env: {
        SERVICE_RUN_SCRIPT: "true",
        // The pause lets both children reach their `sleep` before the command exits.
        SERVICE_HEALTH_CHECK: "sh -c 'sleep 4241 & setsid sleep 4242 & sleep 0.2; exit 3'",
        SERVICE_HEALTH_CHECK_TIMEOUT_MS: "1500",
        SERVICE_HEALTH_CHECK_INTERVAL_MS: "100",
      },
    });
    const json = logFiles(repo.clone).find((name) => name.endsWith(".json"))!;
    const record = readJson(join(repo.clone, ".service", "logs", json));
    const left = marked(`SERVICE_DEPLOY_ID=${record.id}`);
    leftovers.push(...left);
    expect(out.code).toBe(1);
    expect(record.result.healthCheck.attempts).toBeGreaterThan(1);
    expect(left).toEqual([]);
    const log = readFileSync(join(repo.clone, ".service", "logs", json.replace(/\.json$/, ".log")), "utf8");
    expect(log).toMatch(
      /\[health\] attempt 1: stopped what the check left running: process group \d+ \(1 process: sleep\); \d+ \(sleep\) outside its process group/,
    );
    expect(log).toMatch(/\[health\] the check left processes running after (\d+) of \1 attempts; all were stopped/);
    expect(record.result.error).toContain("last: exit code 3");
  });
});
