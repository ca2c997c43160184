/** `service check` and `tags` (docs/configuration.md `tags`): printed per app; a range that does not parse is a problem naming it. */
import { describe, expect, test } from "bun:test";
import { makeRepo, runCli, tempDir } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";

describe("service check and tags", () => {
  test("each app's tags is printed; a range that does not parse is an error naming it, exit 1", async () => {
    const [web, api] = [makeRepo(), makeRepo()];
    const cwd = tempDir("service-check-");
    const apps = (apiTags: string) => [
      {
        name: "web",
        host: "web.example.com",
        path: "/hook",
        repoPath: web.clone,
        runScript: "true",
        tags: "v*",
        branch: "main",
      },
      { name: "api", host: "api.example.com", path: "/hook", repoPath: api.clone, runScript: "true", tags: apiTags },
    ];
    writeServiceYaml(cwd, { apps: apps("^1.4") });
    const good = await runCli(["check"], { cwd, env: { HOME: tempDir() } });
    expect(good.stdout).toContain("no problems found");
    expect(good.stdout).toContain("tags: v*");
    expect(good.stdout).toContain("tags: ^1.4");

    writeServiceYaml(cwd, { apps: apps("^1.x.3") });
    const bad = await runCli(["check"], { cwd, env: { HOME: tempDir() } });
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).toContain(
      'app "api": tags "^1.x.3" is not a semver range (like ^1.4, ~1.4.2, >=1.2.0 <2.0.0, 1.4.x or 1.4.2)',
    );
  });

  test("single-app mode: SERVICE_TAGS is shown with its source, and checked", async () => {
    const repo = makeRepo();
    const good = await runCli(["check"], { cwd: repo.clone, env: { HOME: tempDir(), SERVICE_TAGS: "~1.4.2" } });
    expect(good.stdout).toMatch(/tags\s+~1\.4\.2\s+\[env\]/);
    const bad = await runCli(["check"], { cwd: repo.clone, env: { HOME: tempDir(), SERVICE_TAGS: ">=banana" } });
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).toContain('tags ">=banana" is not a semver range');
  });
});
