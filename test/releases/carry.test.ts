/**
 * A build cache carried from the live release into the next (docs/releases.md "Carrying a build cache"): real
 * releases, real copies, the real CLI.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { counted, currentRelease, deployStreamed, makeReleasesSite, recordOf } from "../_support/release-helpers.ts";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import { lastLine, logFiles, readJson, runCli, startServer, tempDir, waitFor } from "../_support/helpers.ts";

/** A run script that notes what it found carried, then installs: 3000 files in node_modules. */
function installScript(seen: string): string {
  return `sh -c 'ls node_modules 2>/dev/null | wc -l | tr -d " " >> ${seen}; mkdir -p node_modules && for i in $(seq 1 3000); do echo $i > node_modules/f$i; done'`;
}

const seenCounts = (file: string) => readFileSync(file, "utf8").trim().split("\n");

describe('carrying a build cache (docs/releases.md "Carrying a build cache")', () => {
  test("carry copies node_modules (3000 files) of the live release into the new one before its build; a missing path is skipped; the first deploy carries nothing", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n" }, { SERVICE_RELEASES_CARRY: "node_modules,.next/cache" });
    const seen = join(s.cwd, "..", "seen");
    await using server = await startServer(s.cwd, { ...s.env, SERVICE_RUN_SCRIPT: installScript(seen) });
    const one = await deployStreamed(server.url, s.cwd);
    expect(lastLine(one.text)).toBe("[done] ok=true exitCode=0");
    expect(one.text).toContain("[release] carry: no live release yet: nothing to carry");
    const id1 = one.result.release.id;

    s.repo.push({ "public/index.html": "v2\n" }, "v2");
    const two = await deployStreamed(server.url, s.cwd);
    expect(lastLine(two.text)).toBe("[done] ok=true exitCode=0");
    const id2 = two.result.release.id;
    const carried = /\[release\] carried node_modules \(3000 files, ([\d.]+ [kMG]?B)\) from (\S+)\n/.exec(two.text);
    expect(carried?.[2]).toBe(id1);
    expect(two.text).toContain(`[release] carry: .next/cache is not in release ${id1}: skipped`);
    // Carried before the build: the second build found the first one's 3000 files.
    expect(two.text.indexOf("[release] carried node_modules")).toBeLessThan(two.text.indexOf("[release] building"));
    expect(seenCounts(seen)).toEqual(["0", "3000"]);
    expect(two.result.release.carried).toEqual([{ path: "node_modules", files: 3000, bytes: expect.any(Number) }]);
    // A copy, never a hard link or a shared directory: the releases stay apart.
    const oldFile = join(s.site, "releases", id1, "node_modules", "f1");
    const newFile = join(s.site, "releases", id2, "node_modules", "f1");
    expect(statSync(newFile).ino).not.toBe(statSync(oldFile).ino);
    expect(statSync(newFile).nlink).toBe(1);
    expect(lstatSync(join(s.site, "releases", id2, "node_modules")).isDirectory()).toBe(true);
    writeFileSync(newFile, "changed\n");
    expect(readFileSync(oldFile, "utf8")).toBe("1\n");
  });

  test("a carried path the commit tracks fails the deploy before the build, naming it; current stays", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n" }, { SERVICE_RELEASES_CARRY: "node_modules,vendor" });
    await using server = await startServer(s.cwd, s.env);
    const one = await deployStreamed(server.url, s.cwd);
    const id1 = one.result.release.id;
    const tracked = s.repo.push({ "vendor/lib.php": "<?php\n" }, "vendors a library");
    const two = await deployStreamed(server.url, s.cwd);
    expect(lastLine(two.text)).toBe("[done] ok=false exitCode=null");
    expect(two.text).toContain(
      `[release] failed: releases.carry: vendor is tracked in commit ${tracked.slice(0, 12)}: a carried cache must not overwrite the repository's files (remove it from releases.carry, or from the repository)`,
    );
    expect(two.text).not.toContain("[run]");
    expect(counted(s.builds)).toEqual([id1]);
    expect(currentRelease(s.site)).toBe(id1);
    expect(readdirSync(join(s.site, "releases")).filter((name) => !name.endsWith(".json"))).toEqual([id1]);
    expect(two.result.ok).toBe(false);
  });

  test("only real directories and files are carried: a carried path that is a link, and links inside it that lead out of the release, are skipped and said", async () => {
    const outside = tempDir("service-carry-outside-");
    mkdirSync(join(outside, "lib"));
    writeFileSync(join(outside, "lib", "secret"), "outside\n");
    const seen = join(outside, "seen");
    // The build notes what it finds carried (before it makes anything), then makes vendor a link out of the release,
    // and in node_modules a link inside it and one out of it.
    const build = join(outside, "build.sh");
    writeFileSync(
      build,
      [
        "for p in vendor node_modules/.bin/tool node_modules/.bin/inside node_modules/pkg/cli.js; do",
        `  if [ -L $p ]; then echo "$p link"; elif [ -e $p ]; then echo "$p file"; else echo "$p none"; fi >> ${seen}`,
        "done",
        `test -e vendor || ln -s ${outside}/lib vendor`,
        "mkdir -p node_modules/.bin node_modules/pkg && echo cli > node_modules/pkg/cli.js",
        "ln -sfn ../pkg/cli.js node_modules/.bin/inside",
        `ln -sfn ${outside}/lib/secret node_modules/.bin/tool`,
        "",
      ].join("\n"),
    );
    const s = makeReleasesSite(
      { "public/index.html": "v1\n" },
      { SERVICE_RELEASES_CARRY: "vendor,node_modules", SERVICE_RUN_SCRIPT: `sh ${build}` },
    );
    await using server = await startServer(s.cwd, s.env);
    const one = await deployStreamed(server.url, s.cwd);
    const id1 = one.result.release.id;
    s.repo.push({ "public/index.html": "v2\n" }, "v2");
    const two = await deployStreamed(server.url, s.cwd);
    expect(lastLine(two.text)).toBe("[done] ok=true exitCode=0");
    expect(two.text).toContain(
      `[release] carry: vendor in release ${id1} is a link, not a directory or a file: skipped (only real directories and files are carried)`,
    );
    expect(two.text).toContain(
      "[release] carry: node_modules: skipped 1 link leading out of the release: node_modules/.bin/tool",
    );
    expect(two.text).toMatch(/\[release\] carried node_modules \(2 files, \d+ B\)/);
    // What the second build found: no vendor, no link out; the link inside node_modules and its target.
    expect(readFileSync(seen, "utf8").split("\n").slice(4, 8)).toEqual([
      "vendor none",
      "node_modules/.bin/tool none",
      "node_modules/.bin/inside link",
      "node_modules/pkg/cli.js file",
    ]);
    expect(two.result.release.carried).toEqual([{ path: "node_modules", files: 2, bytes: expect.any(Number) }]);
    expect(readdirSync(join(outside, "lib"))).toEqual(["secret"]);
    expect(readFileSync(join(outside, "lib", "secret"), "utf8")).toBe("outside\n");
  });

  test("service deploy --no-carry builds from nothing once, and the record says so; the next deploy carries again", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n" }, { SERVICE_RELEASES_CARRY: "node_modules" });
    const seen = join(s.cwd, "..", "seen");
    const env = { ...s.env, SERVICE_RUN_SCRIPT: installScript(seen) };
    expect((await runCli(["deploy"], { cwd: s.cwd, env })).code).toBe(0);
    s.repo.push({ "public/index.html": "v2\n" }, "v2");
    const fresh = await runCli(["deploy", "--no-carry"], { cwd: s.cwd, env });
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toContain("[release] carry: not carried (asked with --no-carry): building from nothing");
    expect(fresh.stdout).not.toContain("[release] carried");
    const record = recordOf(s.cwd, fresh.stdout);
    expect(record.result.release).toMatchObject({ noCarry: true, carried: [] });
    s.repo.push({ "public/index.html": "v3\n" }, "v3");
    const again = await runCli(["deploy"], { cwd: s.cwd, env });
    expect(again.stdout).toContain("[release] carried node_modules (3000 files");
    expect(seenCounts(seen)).toEqual(["0", "0", "3000"]);
  });

  test("the admin API's deploy with carry: false builds from nothing; a carry that is not a boolean is a 400", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n" }, { SERVICE_RELEASES_CARRY: "node_modules" });
    const seen = join(s.cwd, "..", "seen");
    await using server = await startAdmin(s.cwd, { ...s.env, SERVICE_RUN_SCRIPT: installScript(seen) });
    await deployStreamed(server.url, s.cwd);
    const ask = (body: unknown) =>
      fetch(`${server.admin}/api/apps/default/deploy`, {
        method: "POST",
        headers: { ...bearer(), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const bad = await ask({ carry: "no" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).message).toBe('"carry" must be true or false');
    s.repo.push({ "public/index.html": "v2\n" }, "v2");
    const accepted = await ask({ carry: false });
    expect(accepted.status).toBe(200);
    const { id } = await accepted.json();
    const record = await waitFor(() => {
      const file = logFiles(s.cwd).find((name) => name.endsWith(`${id}.json`));
      const json = file && readJson(join(s.cwd, ".service", "logs", file));
      return json?.status === "done" ? json : undefined;
    }, "the API's deploy to end");
    expect(record.result.release).toMatchObject({ noCarry: true, carried: [] });
    expect(seenCounts(seen)).toEqual(["0", "0"]);
  });

  test("releases.carry in the repository's own config file changes nothing", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n" });
    const seen = join(s.cwd, "..", "seen");
    s.repo.push(
      {
        "service.yaml": `runScript: "${installScript(seen).replace(/"/g, '\\"')}"\nreleases:\n  path: ${s.site}\n  carry: [node_modules]\n`,
      },
      "the repository asks for a carry",
    );
    // The service's own run script would win over the repository's (SERVICE_* variables do).
    await using server = await startServer(s.cwd, { ...s.env, SERVICE_RUN_SCRIPT: undefined });
    const one = await deployStreamed(server.url, s.cwd);
    expect(one.text).toContain("[config] loaded");
    s.repo.push({ "public/index.html": "v2\n" }, "v2");
    const two = await deployStreamed(server.url, s.cwd);
    expect(lastLine(two.text)).toBe("[done] ok=true exitCode=0");
    // The repository's run script ran (its file was read), its carry did not.
    expect(seenCounts(seen)).toEqual(["0", "0"]);
    expect(two.text).not.toContain("carr");
    expect(existsSync(join(two.result.release.path, "node_modules", "f1"))).toBe(true);
  });
});

describe("the carry setting (docs/configuration.md)", () => {
  test("service check warns when a carried node_modules meets npm ci in the run script, which deletes it first", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n" });
    const warning =
      "releases.carry has node_modules, but the run script runs npm ci, which deletes node_modules before it installs: nothing carried is used (build with npm install, or carry npm's cache: npm ci --cache .npm-cache with carry: [.npm-cache]; docs/releases.md)";
    const checked = (carry: string, runScript: string) =>
      runCli(["check"], {
        cwd: s.cwd,
        env: { ...s.env, SERVICE_RELEASES_CARRY: carry, SERVICE_RUN_SCRIPT: runScript },
      });
    for (const script of ["npm ci\nnpm run build", "cd web && npm ci --omit=dev", "npm clean-install"]) {
      const warned = await checked("node_modules,web/node_modules", script);
      expect(warned.stdout + warned.stderr).toContain(`warning: ${warning}`);
    }
    for (const [carry, script] of [
      ["node_modules", "npm install\nnpm run build"],
      [".npm-cache", "npm ci --cache .npm-cache"],
      ["node_modules", "echo npm ci-free build"],
    ] as const) {
      const quiet = await checked(carry, script);
      expect(quiet.stdout + quiet.stderr).not.toContain("npm ci, which deletes");
    }
  });

  test("carry overlapping shared, absolute or with .. is a config error at start and in service check, naming the key", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n" });
    const overlapping = { ...s.env, SERVICE_RELEASES_SHARED: "storage/", SERVICE_RELEASES_CARRY: "storage/cache" };
    const check = await runCli(["check"], { cwd: s.cwd, env: overlapping });
    expect(check.code).not.toBe(0);
    expect(check.stdout + check.stderr).toContain(
      `releases.carry: "storage/cache" overlaps the shared path "storage/": a carried path must be apart from the shared ones`,
    );
    const start = await runCli([], { cwd: s.cwd, env: { ...overlapping, SERVICE_PORT: "0" }, timeoutMs: 20_000 });
    expect(start.code).not.toBe(0);
    expect(start.stdout + start.stderr).toContain(`"storage/cache" overlaps the shared path "storage/"`);
    for (const wrong of ["/srv/cache", "../cache", "a/../b"]) {
      const bad = await runCli(["check"], { cwd: s.cwd, env: { ...s.env, SERVICE_RELEASES_CARRY: wrong } });
      expect(bad.code).not.toBe(0);
      expect(bad.stdout + bad.stderr).toContain(
        `environment variable SERVICE_RELEASES_CARRY: ${JSON.stringify(wrong)} must be a path inside a release`,
      );
    }
    const good = await runCli(["check"], {
      cwd: s.cwd,
      env: { ...s.env, SERVICE_RELEASES_CARRY: "node_modules,.next/cache" },
    });
    expect(good.code).toBe(0);
    expect(good.stdout).toContain(`${s.site} (keep 5, carry: node_modules, .next/cache)`);
  });
});
