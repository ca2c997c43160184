/**
 * One app's history for its page and stats, newest first: ok and slow (a 4 s script), ok, failed (all now), and ok
 * ten days ago (under libfaketime): 3 in the last 7 days, 4 in the last 30.
 */
import { expect } from "bun:test";
import { FAKETIME_LIB } from "./history-fixtures.ts";
import { makeRepo, type Repo, runCli, tempDir } from "./helpers.ts";
import { writeServiceYaml } from "./webhook-fixtures.ts";

export async function statsHistory(): Promise<{ cwd: string; repo: Repo }> {
  const repo = makeRepo({ "build.sh": "exit 0\n" });
  const cwd = tempDir("service-stats-");
  writeServiceYaml(cwd, {
    apps: [{ name: "web", host: "web.example.com", path: "/hook", repoPath: repo.clone, runScript: "sh build.sh" }],
  });
  const deploy = async (code: number, env: Record<string, string> = {}) =>
    expect((await runCli(["deploy", "--app", "web"], { cwd, env })).code).toBe(code);
  await deploy(0, { LD_PRELOAD: FAKETIME_LIB, FAKETIME: "-10d" });
  repo.push({ "build.sh": "exit 1\n" }, "Break the build");
  await deploy(1);
  repo.push({ "build.sh": "exit 0\n" }, "Fix the build");
  await deploy(0);
  repo.push({ "build.sh": "sleep 4\n" }, "Slow build");
  await deploy(0);
  return { cwd, repo };
}
