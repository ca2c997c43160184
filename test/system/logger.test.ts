/**
 * The server writes its lines with its own console (src/system/logger.ts), not consola: the same bytes as
 * consola's plain reporter, on the same stream, message by message (docs/performance.md "Idle memory").
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { baseEnv } from "../_support/helpers.ts";

function linesOf(which: "consola" | "service") {
  const run = Bun.spawnSync([process.execPath, join(import.meta.dir, "_console-lines.ts"), which], {
    env: baseEnv(),
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

describe("the service's console", () => {
  test("writes consola's plain lines byte for byte: levels, tags, placeholders, errors with causes, objects, repeats", () => {
    const consola = linesOf("consola");
    const service = linesOf("service");
    // The comparison is of real output: both wrote to both streams.
    expect(consola.stdout).toContain("[info] [service] listening on http://localhost:8080\n");
    expect(consola.stderr).toContain("[error] port 8080 is already in use");
    expect(consola.stderr).toContain("(repeated 2 times)");
    expect(service).toEqual(consola);
  });
});
