/** `service check` of `paths` and `skipMarkers`: how they read, and what would make every push skip or collide. */
import { describe, expect, test } from "bun:test";
import { makeRepo, runCli, tempDir } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";
import { MONOREPO } from "./_fixtures.ts";

describe("service check of paths and skip markers", () => {
  test("each app shows its paths and skip markers; a glob matching no file and two apps on one clone are warned about", async () => {
    const repo = makeRepo(MONOREPO);
    const cwd = tempDir("service-check-");
    const app = (name: string, extra: Record<string, unknown>) => ({
      name,
      host: `${name}.example.com`,
      path: "/hook",
      repoPath: repo.clone,
      runScript: "true",
      ...extra,
    });
    writeServiceYaml(cwd, {
      apps: [
        app("web", { paths: ["apps/web/**", "packages/ui/**"], skipMarkers: true }),
        app("api", { paths: ["apps/apii/**"], skipMarkers: ["[hold]"] }),
      ],
    });
    const result = await runCli(["check"], { cwd, env: { HOME: tempDir() } });
    expect(result.stdout).toContain("paths: apps/web/**, packages/ui/**");
    expect(result.stdout).toContain("skip markers: [skip deploy], [deploy skip], [skip cd], [no deploy]");
    expect(result.stdout).toContain("paths: apps/apii/**");
    expect(result.stdout).toContain("skip markers: [hold]");
    expect(result.stdout).toContain('app "api": paths glob "apps/apii/**" matches no file at HEAD');
    expect(result.stdout).not.toContain('paths glob "apps/web/**"');
    expect(result.stdout).toContain(`apps "web", "api" deploy the same clone ${repo.clone} in place`);
  });

  test("a single app without them shows paths any and skip markers off, and no warning", async () => {
    const repo = makeRepo(MONOREPO);
    const cwd = tempDir("service-check-");
    writeServiceYaml(cwd, {
      apps: [{ name: "web", host: "web.example.com", path: "/hook", repoPath: repo.clone, runScript: "true" }],
    });
    const result = await runCli(["check"], { cwd, env: { HOME: tempDir() } });
    expect(result.stdout).toContain("paths: any");
    expect(result.stdout).toContain("skip markers: off");
    expect(result.stdout).not.toContain("paths glob");
    expect(result.stdout).not.toContain("same clone");
  });
});
