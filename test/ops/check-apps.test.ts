/**
 * `service check` in multi-app mode (docs/multi-app.md "Multi-app mode"): each app's block shows what decides its
 * deploys: the run script, branch, events, health check, rollback and polling, as for a single app.
 */
import { describe, expect, test } from "bun:test";
import { makeRepo, runCli, tempDir } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";

/** The lines of one app's block: from its `app <name>:` line to the next blank line. */
function block(stdout: string, name: string): string[] {
  const lines = stdout.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`  app ${name}: `));
  const end = lines.findIndex((line, i) => i > start && line.trim() === "");
  return lines.slice(start, end).map((line) => line.trim());
}

describe('service check in multi-app mode (docs/multi-app.md "Multi-app mode")', () => {
  test("each app shows its run script, branch, events, health check, rollback and polling", async () => {
    const [web, api] = [makeRepo(), makeRepo()];
    const cwd = tempDir("service-check-");
    writeServiceYaml(cwd, {
      rollbackOnFailure: true,
      apps: [
        {
          name: "web",
          host: "web.example.com",
          path: "/hook",
          repoPath: web.clone,
          runScript: "npm ci\nnpm run build\n",
          branch: "main",
          events: ["push"],
          healthCheckUrl: "http://user:hunter2-password@localhost:8080/health",
          healthCheckTimeoutMs: 30000,
          pollIntervalMs: 60000,
        },
        {
          name: "api",
          host: "api.example.com",
          path: "/hook",
          repoPath: api.clone,
          runScript: "make deploy",
          healthCheck: "curl -fsS localhost:9000/ready",
          rollbackOnFailure: false,
        },
      ],
    });
    const result = await runCli(["check"], { cwd, env: { HOME: tempDir() } });
    expect(result.code).toBe(0);
    expect(block(result.stdout, "web")).toEqual(
      expect.arrayContaining([
        "run: npm ci; npm run build",
        "branch: main",
        "events: push",
        "health check: GET http://user:***@localhost:8080/health (within 30 s, every 2 s)",
        "rollback: on failure",
        "polling: every 60 s",
      ]),
    );
    expect(block(result.stdout, "api")).toEqual(
      expect.arrayContaining([
        "run: make deploy",
        "branch: any",
        "events: any",
        "health check: curl -fsS localhost:9000/ready (within 60 s, every 2 s)",
        "rollback: off",
        "polling: off",
      ]),
    );
    expect(result.stdout).not.toContain("hunter2-password");
  });
});
