/**
 * Fixtures of the tests that line deploys up: the real server deploying a fresh repository through a gate's
 * script (gate.ts), whose deploys wait until the test opens the gate, and the `deploy` command as a process
 * read while it runs.
 */
import { StreamReader, makeGate } from "./gate.ts";
import { baseEnv, CLI, makeRepo, SECRET, startServer } from "./helpers.ts";

/**
 * `await using gated = await startGated(extra)`: a repository, a gate, the server's environment (the secret, the
 * gate's script as the run script, `extra` on top) and the server. When the block ends the gate opens and the
 * server stops.
 */
export async function startGated(extra: Record<string, string> = {}) {
  const repo = makeRepo();
  const gate = makeGate();
  const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: gate.script, ...gate.env, ...extra };
  const server = await startServer(repo.clone, env);
  return {
    repo,
    gate,
    env,
    server,
    async [Symbol.asyncDispose]() {
      gate.open();
      await server.stop();
    },
  };
}

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
