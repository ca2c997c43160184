/**
 * `service check` says what is in force in words (docs/cli.md "service check"): a single app's gate and limits
 * described, never `[object Object]`; the status context; in multi-app mode, only the top-level values an app
 * uses, and each app's deployment events, creators, freeze and catch-up.
 */
import { describe, expect, test } from "bun:test";
import { makeRepo, runCli, tempDir } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";

const status = { provider: "github", repo: "o/r", token: "t0k3n-abcdefghijklmnop" };

/** The lines of one app's block: from its `app <name>:` line to the next blank line. */
function block(stdout: string, name: string): string[] {
  const lines = stdout.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`  app ${name}: `));
  const end = lines.findIndex((line, i) => i > start && line.trim() === "");
  return lines.slice(start, end).map((line) => line.trim());
}

/** The value of a top-level row of the table, or undefined. */
const row = (stdout: string, key: string) =>
  stdout
    .split("\n")
    .find((line) => line.startsWith(`  ${key} `))
    ?.slice(2 + key.length)
    .trim();

describe('service check in words (docs/cli.md "service check")', () => {
  test("a single app's gate and limits are described, and its status names the context", async () => {
    const repo = makeRepo();
    writeServiceYaml(repo.clone, {
      runScript: "true",
      status: { ...status, context: "ci/deploy" },
      gate: { checks: ["build", { name: "lint", by: "ci-bot" }], waitMs: 60000 },
      limits: { memory: "256M" },
    });
    const result = await runCli(["check"], { cwd: repo.clone, env: { HOME: tempDir() } });
    expect(result.stdout).not.toContain("[object Object]");
    expect(row(result.stdout, "gate")).toStartWith("build, lint (by ci-bot) success (wait up to 60 s)");
    expect(row(result.stdout, "limits")).toStartWith("memory 256M");
    expect(row(result.stdout, "status")).toContain("context ci/deploy");
  });

  test("multi-app: no top-level value that every app overrides; each app's events, creators, freeze and catch-up", async () => {
    const [web, api] = [makeRepo(), makeRepo()];
    const cwd = tempDir("service-check-");
    writeServiceYaml(cwd, {
      runScript: "echo top-level",
      runTimeoutMs: 5000,
      apps: [
        {
          name: "web",
          host: "web.example.com",
          path: "/hook",
          repoPath: web.clone,
          runScript: "make web",
          status,
          deploymentEvents: true,
          deploymentCreators: ["alice", "bob"],
          catchUp: true,
          freeze: [{ from: "Fri 16:00", to: "Mon 08:00", timeZone: "UTC", reason: "weekend" }],
        },
        { name: "api", host: "api.example.com", path: "/hook", repoPath: api.clone, runScript: "make api" },
      ],
    });
    const result = await runCli(["check"], { cwd, env: { HOME: tempDir() } });
    expect(result.stdout).not.toContain("echo top-level");
    expect(row(result.stdout, "runScript")).toBeUndefined();
    expect(row(result.stdout, "repoPath")).toBeUndefined();
    expect(row(result.stdout, "path")).toBeUndefined();
    expect(row(result.stdout, "runTimeoutMs")).toStartWith("5000");
    expect(row(result.stdout, "port")).toStartWith("3141");
    expect(block(result.stdout, "web")).toEqual(
      expect.arrayContaining([
        "deployment events: on (created by alice, bob)",
        "catch up: on",
        "freeze: weekend: Fri 16:00 → Mon 08:00 UTC",
      ]),
    );
    expect(block(result.stdout, "web").find((line) => line.startsWith("status: "))).toContain("context deploy/web");
    expect(block(result.stdout, "api")).toEqual(
      expect.arrayContaining(["deployment events: off", "catch up: off", "freeze: (none)"]),
    );
  });
});
