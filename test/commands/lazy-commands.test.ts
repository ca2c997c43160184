/**
 * docs/architecture.md "Optional features": the CLI loads the command it runs, not the others (each command is
 * imported when it is the one asked for). Checked on the CLI run from source: the compiled binary holds one bundle.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, ROOT, tempDir } from "../_support/helpers.ts";

const COMMAND_FILES = [
  "serve",
  "deploy",
  "logs",
  "check",
  "systemd",
  "rollback",
  "status",
  "pause",
  "cancel",
  "secret",
];

/** The commands/ files the CLI loaded for `args`, run from source in an empty directory. */
function commandsLoadedBy(args: string[]): string[] {
  const out = join(tempDir("service-modules-"), "modules.txt");
  const run = Bun.spawnSync(
    [
      process.execPath,
      "--no-env-file",
      "--preload",
      join(ROOT, "test/_support/dump-modules.ts"),
      join(ROOT, "src/cli.ts"),
      ...args,
    ],
    { cwd: tempDir("service-cwd-"), env: baseEnv({ SERVICE_TEST_MODULES_OUT: out }), stdout: "pipe", stderr: "pipe" },
  );
  expect(run.exitCode).not.toBeNull();
  return readFileSync(out, "utf8")
    .split("\n")
    .filter((file) => /^commands\/[a-z]/.test(file))
    .map((file) => file.replace(/^commands\/|\.ts$/g, ""));
}

describe('the CLI loads only the command it runs (docs/architecture.md "Optional features")', () => {
  test.skipIf(!!process.env.SERVICE_TEST_BIN).each([
    [["status"], ["status"]],
    [["logs"], ["logs"]],
    [["pause", "--help"], ["pause"]],
  ])("service %p loads commands/%p only", (args, expected) => {
    expect(commandsLoadedBy(args).filter((name) => COMMAND_FILES.includes(name))).toEqual(expected);
  });
});
