/**
 * The `deploy` command as a process, read while it runs: for the tests that line deploys up behind a gate (gate.ts);
 * and the queue ticket of a running deploy.
 */
import { queueKey, readTicket, scanTickets, ticketDir } from "../../src/queue/tickets.ts";
import { StreamReader } from "./gate.ts";
import { baseEnv, CLI, waitFor } from "./helpers.ts";

/**
 * `await using cli = spawnDeploy(cwd, env)`: `service deploy` (or the command `args` name) with its stdout read as it
 * comes; killed when the block ends.
 */
export function spawnDeploy(cwd: string, env: Record<string, string>, args: string[] = ["deploy"]) {
  const proc = Bun.spawn([...CLI, ...args], {
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

/**
 * Resolves once a queue ticket of `repoPath` names process group `pgid` (a script's own pid: each command leads its
 * group): a script that has written its first line may run before its group is on record (the ticket may still name
 * the pull's), and a holder killed -9 in between leaves nothing to say the group was the deploy's.
 */
export function groupOnRecord(repoPath: string, pgid: number): Promise<true> {
  const dir = ticketDir(queueKey(repoPath));
  return waitFor(() => {
    return scanTickets(dir).live.some((name) => readTicket(dir, name).groups.some((g) => g.pgid === pgid)) || undefined;
  }, `process group ${pgid} on record in a queue ticket`);
}
