/**
 * docs/architecture.md "Optional features": the CLI loads the command it runs, not the others (each command is
 * imported when it is the one asked for). Checked on the CLI run from source: the compiled binary holds one bundle.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, makeRepo, SECRET, tempDir } from "../_support/helpers.ts";
import { CLI_LISTING_MODULES, modulesOfServer } from "../_support/cli-modules.ts";
import { freePort } from "../_support/proxies.ts";

const COMMAND_FILES = [
  "serve",
  "deploy",
  "logs",
  "check",
  "systemd",
  "rollback",
  "status",
  "stats",
  "pause",
  "cancel",
  "notify",
  "secret",
];

/** The commands/ files the CLI loaded for `args`, run from source in an empty directory. */
function commandsLoadedBy(args: string[]): string[] {
  const out = join(tempDir("service-modules-"), "modules.txt");
  const run = Bun.spawnSync([...CLI_LISTING_MODULES, ...args], {
    cwd: tempDir("service-cwd-"),
    env: baseEnv({ SERVICE_TEST_MODULES_OUT: out }),
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(run.exitCode).not.toBeNull();
  return readFileSync(out, "utf8")
    .split("\n")
    .filter((file) => /^src\/commands\/[a-z]/.test(file))
    .map((file) => file.replace(/^src\/commands\/|\.ts$/g, ""));
}

describe('the CLI loads only the command it runs (docs/architecture.md "Optional features")', () => {
  test.skipIf(!!process.env.SERVICE_TEST_BIN).each([
    [["status"], ["status"]],
    [["stats"], ["stats"]],
    [["logs"], ["logs"]],
    [["pause", "--help"], ["pause"]],
  ])("service %p loads commands/%p only", (args, expected) => {
    expect(commandsLoadedBy(args).filter((name) => COMMAND_FILES.includes(name))).toEqual(expected);
  });
});

describe("a server loads the yaml package only when its config file needs it, and consola not at all off a terminal", () => {
  const yamlParser = (modules: string[]) => modules.some((m) => m.startsWith("node_modules/yaml/"));
  // Its lines are written by the service's own console (system/logger.ts): consola is the terminal's.
  const consola = (modules: string[]) => modules.some((m) => m.startsWith("node_modules/consola/"));

  test.skipIf(!!process.env.SERVICE_TEST_BIN)(
    "configured by its environment, its output a pipe: neither; with a plain service.yaml: neither (Bun's parser reads it); with one using anchors: the package only",
    async () => {
      const repo = makeRepo();
      const env = { SERVICE_HOSTNAME: "127.0.0.1", SERVICE_SECRET: SECRET, SERVICE_REPO_PATH: repo.clone };
      const bare = await modulesOfServer(tempDir("service-cwd-"), { ...env, SERVICE_PORT: String(await freePort()) });
      // It did load the server and its console: the list is the real one.
      expect(bare).toContain("src/server.ts");
      expect(bare).toContain("src/system/logger.ts");
      expect([yamlParser(bare), consola(bare)]).toEqual([false, false]);

      const cwd = tempDir("service-cwd-");
      writeFileSync(join(cwd, "service.yaml"), `runScript: "true"\n`);
      const withFile = await modulesOfServer(cwd, { ...env, SERVICE_PORT: String(await freePort()) });
      expect([yamlParser(withFile), consola(withFile)]).toEqual([false, false]);

      const anchored = tempDir("service-cwd-");
      writeFileSync(join(anchored, "service.yaml"), `runScript: &run "true"\nactivateScript: *run\n`);
      const withAnchors = await modulesOfServer(anchored, { ...env, SERVICE_PORT: String(await freePort()) });
      expect([yamlParser(withAnchors), consola(withAnchors)]).toEqual([true, false]);
    },
  );
});
