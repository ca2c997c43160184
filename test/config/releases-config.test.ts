/**
 * The `releases` and `activateScript` keys (docs/configuration.md, docs/releases.md "Configuration"): checked
 * values naming the key, the environment's three variables, `service check`'s view, and two apps in one releases
 * directory refused by the check and at start.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { stringify } from "yaml";
import { makeRepo, runCli, SECRET, tempDir } from "../_support/helpers.ts";

const check = (cwd: string, env: Record<string, string> = {}) => runCli(["check"], { cwd, env });

/** A service directory with `config` as its service.yaml, a repository, and an empty releases directory. */
function setup(config: (paths: { repo: string; site: string }) => Record<string, unknown>) {
  const repo = makeRepo();
  const cwd = tempDir("service-releases-config-");
  const site = join(cwd, "site");
  mkdirSync(site);
  writeFileSync(join(cwd, "service.yaml"), stringify({ secret: SECRET, ...config({ repo: repo.clone, site }) }));
  return { cwd, site, repo: repo.clone };
}

const problemLines = (stdout: string) => stdout.split("\n").filter((line) => line.startsWith("  - "));

describe('releases key (docs/releases.md "Configuration")', () => {
  test("service check prints the releases in force and finds no problem in a good setting", async () => {
    const { cwd, site } = setup(({ repo }) => ({
      repoPath: repo,
      releases: { path: "site", keep: 3, shared: [".env", "storage/"] },
      activateScript: "true",
    }));
    const result = await check(cwd);
    expect(result.stdout).toContain("no problems found");
    expect(result.stdout).toMatch(
      new RegExp(`releases\\s+${site} \\(keep 3, shared: \\.env, storage/\\)\\s+\\[file\\]`),
    );
    expect(result.code).toBe(0);
  });

  test("wrong values are problems naming the key: keep below 2, shared paths outside a release, no path, an unknown field", async () => {
    const { cwd } = setup(({ repo }) => ({
      repoPath: repo,
      releases: { path: "site", keep: 1, shared: ["../up", "/etc/passwd", "a/./b", ".git/hooks", "ok/"], depth: 3 },
    }));
    const result = await check(cwd);
    expect(result.code).toBe(1);
    const problems = problemLines(result.stdout).join("\n");
    expect(problems).toContain('key "releases": keep: expected a whole number of releases, at least 2, got 1');
    expect(problems).toContain('key "releases": shared: "../up" must be a path inside a release');
    expect(problems).toContain('key "releases": shared: "/etc/passwd" must be a path inside a release');
    expect(problems).toContain('key "releases": shared: "a/./b" must be a path inside a release');
    expect(problems).toContain('"releases": shared: ".git/hooks": .git belongs to the release\'s checkout');
    expect(problems).toContain('key "releases": unknown key "depth" (allowed: path, keep, shared, carry)');

    const none = setup(({ repo }) => ({ repoPath: repo, releases: { keep: 3 } }));
    const missing = await check(none.cwd);
    expect(problemLines(missing.stdout).join("\n")).toContain('key "releases": "path" is required');
  });

  test("the directory must be usable: service check says when it is missing or inside repoPath", async () => {
    const gone = setup(({ repo }) => ({ repoPath: repo, releases: { path: "nowhere" } }));
    const missing = await check(gone.cwd);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain(`releases.path ${join(gone.cwd, "nowhere")} does not exist: create it`);

    const inClone = setup(({ repo }) => ({ repoPath: repo, releases: { path: join(repo, "releases") } }));
    mkdirSync(join(inClone.repo, "releases"));
    const inside = await check(inClone.cwd);
    expect(inside.code).toBe(1);
    expect(inside.stdout).toContain(`is inside repoPath ${inClone.repo}: put it outside the clone`);
  });

  test("a repoPath at <releases.path>/releases, /shared or /current is refused: releases would land in the clone, the pull would change what is live", async () => {
    for (const sub of ["releases", "shared", "current", "shared/app"]) {
      const { cwd, site, repo } = setup(({ repo }) => ({ repoPath: repo, releases: { path: "site" } }));
      const repoPath = join(site, sub);
      if (sub === "current") symlinkSync(repo, repoPath);
      else {
        mkdirSync(dirname(repoPath), { recursive: true });
        renameSync(repo, repoPath);
      }
      writeFileSync(join(cwd, "service.yaml"), stringify({ secret: SECRET, repoPath, releases: { path: "site" } }));
      const result = await check(cwd);
      expect({ sub, code: result.code }).toEqual({ sub, code: 1 });
      const top = sub.split("/")[0];
      expect(result.stdout).toContain(
        `repoPath ${repoPath} is inside ${join(site, top!)}, part of releases.path ${site}: put the clone outside releases/, shared/ and current`,
      );
    }
  });

  test("SERVICE_RELEASES_PATH turns releases on; SERVICE_RELEASES_KEEP and SERVICE_RELEASES_SHARED (comma-separated) change the releases in force", async () => {
    const { cwd, site } = setup(({ repo, site }) => ({ repoPath: repo, releases: { path: site, keep: 4 } }));
    const fromFile = await check(cwd, { SERVICE_RELEASES_KEEP: "2", SERVICE_RELEASES_SHARED: ".env, storage/" });
    expect(fromFile.stdout).toMatch(
      new RegExp(`releases\\s+${site} \\(keep 2, shared: \\.env, storage/\\)\\s+\\[env\\]`),
    );
    expect(fromFile.code).toBe(0);

    const plain = setup(({ repo }) => ({ repoPath: repo }));
    const fromEnv = await check(plain.cwd, { SERVICE_RELEASES_PATH: "site" });
    expect(fromEnv.stdout).toMatch(new RegExp(`releases\\s+${plain.site} \\(keep 5\\)\\s+\\[env\\]`));

    const bad = await check(plain.cwd, { SERVICE_RELEASES_PATH: "site", SERVICE_RELEASES_KEEP: "one" });
    expect(bad.stdout).toContain("environment variable SERVICE_RELEASES_KEEP: expected a whole number of releases");
    expect(bad.code).toBe(1);

    // Without a path anywhere, the other two have nothing to change: the start refuses, naming the variable.
    const start = await runCli([], { cwd: plain.cwd, env: { SERVICE_RELEASES_KEEP: "3", SERVICE_PORT: "0" } });
    expect(start.code).toBe(1);
    expect(start.stderr).toContain(
      "environment variable SERVICE_RELEASES_KEEP: set without a releases path (set SERVICE_RELEASES_PATH, or releases.path in the config file)",
    );
  });

  test("an activateScript without releases is a warning: it would never run", async () => {
    const { cwd } = setup(({ repo }) => ({ repoPath: repo, activateScript: "systemctl reload app" }));
    const result = await check(cwd);
    expect(result.stdout).toContain("warning: activateScript is set but releases is not");
    expect(result.code).toBe(0);
  });
});

describe('releases per app (docs/releases.md "Several apps")', () => {
  const twoApps = (site: string, repoA: string, repoB: string, b: Record<string, unknown> = {}) => ({
    apps: [
      {
        name: "web",
        host: "web.example.com",
        path: "/hook",
        repoPath: repoA,
        runScript: "true",
        secret: SECRET,
        releases: { path: site },
      },
      { name: "api", host: "api.example.com", path: "/hook", repoPath: repoB, runScript: "true", secret: SECRET, ...b },
    ],
  });

  test("each app's releases are printed by the check; two apps in one releases directory are refused by the check and at start", async () => {
    const other = makeRepo().clone;
    const own = setup(({ repo, site }) => twoApps(site, repo, other, { releases: { path: `${site}-api`, keep: 2 } }));
    mkdirSync(`${own.site}-api`);
    const good = await check(own.cwd);
    expect(good.stdout).toContain(`    releases: ${own.site} (keep 5)`);
    expect(good.stdout).toContain(`    releases: ${own.site}-api (keep 2)`);
    expect(good.code).toBe(0);

    const shared = setup(({ repo, site }) => twoApps(site, repo, other, { releases: { path: site } }));
    const clash = `apps entry 2 ("api"): releases.path ${shared.site} is already the releases path of app "web"`;
    const refused = await check(shared.cwd);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(clash);
    const start = await runCli([], { cwd: shared.cwd, env: { SERVICE_PORT: "0" } });
    expect(start.code).toBe(1);
    expect(start.stderr).toContain(clash);
  });

  test("releases at the top level are every app's: two apps inheriting one directory are refused too", async () => {
    const other = makeRepo().clone;
    const { cwd, site } = setup(({ repo, site }) => {
      const apps = twoApps(site, repo, other).apps.map(({ releases: _, ...app }) => app);
      return { releases: { path: site }, apps };
    });
    const refused = await check(cwd);
    expect(refused.stdout).toContain(`releases.path ${site} is already the releases path of app "web"`);
    expect(refused.code).toBe(1);
  });
});
