/** The `deploy` command as a process, read while it runs: for the tests that line deploys up behind a gate (gate.ts). */
import { StreamReader } from "./gate.ts";
import { baseEnv, CLI } from "./helpers.ts";

/** `await using cli = spawnDeploy(cwd, env)`: `service deploy` with its stdout read as it comes; killed when the block ends. */
export function spawnDeploy(cwd: string, env: Record<string, string>) {
  const proc = Bun.spawn([...CLI, "deploy"], {
    cwd,
    env: baseEnv(env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = new StreamReader(new Response(proc.stdout));
  return {
    proc,
    out,
    async [Symbol.asyncDispose]() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}
