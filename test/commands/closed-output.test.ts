/**
 * `service logs … | head`: a reader that stops early closes the pipe, and the command ends quietly (docs/cli.md
 * "CLI"): no stack trace, exit 0, no wait for a deploy nobody reads any more.
 */
import { describe, expect, test } from "bun:test";
import { baseEnv, CLI, makeRepo, runCli } from "../_support/helpers.ts";

/** Runs `service <args> | head -n 1` in bash with pipefail: the exit code is the CLI's. */
async function throughHead(args: string[], cwd: string) {
  const proc = Bun.spawn(["bash", "-c", 'set -o pipefail; "$@" | head -n 1', "bash", ...CLI, ...args], {
    cwd,
    env: baseEnv(),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { stdout, stderr, code };
}

describe('service logs into a pipe closed early (docs/cli.md "CLI")', () => {
  test("logs --follow, logs ID and the listing end quietly with exit 0 when head has read its line", async () => {
    const repo = makeRepo();
    // Output well past a pipe's buffer: the writes after head exits meet a closed pipe (EPIPE).
    const env = { SERVICE_RUN_SCRIPT: "seq 1 300000" };
    expect((await runCli(["deploy"], { cwd: repo.clone, env })).code).toBe(0);
    for (const args of [
      ["logs", "last", "--follow"],
      ["logs", "last"],
    ]) {
      const result = await throughHead(args, repo.clone);
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: "" });
      expect(result.stdout).toStartWith("[deploy] ");
    }
  });
});
