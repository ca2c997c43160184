/**
 * A service killed -9 whose parent has not reaped it yet is a zombie: its pid and start time are still in
 * /proc, but it runs nothing. A restart right after must take its deploy as interrupted.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processAlive, processStart } from "../../src/system/liveness.ts";
import {
  baseEnv,
  CLI,
  logFiles,
  makeRepo,
  post,
  readJson,
  SECRET,
  startServer,
  tempDir,
  waitFor,
} from "../_support/helpers.ts";
import { groupOnRecord } from "../_support/queueing.ts";

/** The state letter of `pid` in /proc ("Z" for a zombie), or undefined once it is gone. */
function state(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

/** The name `pid` runs as (`sh` until it execs its command), or undefined once it is gone. */
function comm(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return undefined;
  }
}

/**
 * Starts `command` in the background of a shell that then becomes `sleep` and never waits for it: once the
 * command dies it stays a zombie until the sleep ends. Its pid, and the parent to kill afterwards.
 */
async function underNonReapingParent(command: string[], options: { cwd: string; env: Record<string, string> }) {
  const out = join(tempDir("service-zombie-"), "out");
  const parent = Bun.spawn(["sh", "-c", `"$@" >"${out}" 2>&1 & echo $!; exec sleep 600`, "sh", ...command], {
    cwd: options.cwd,
    env: baseEnv(options.env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "ignore",
  });
  const reader = parent.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the shell ended before naming its child");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const pid = Number(text.trim());
  // Until both have exec'd, a shell is still there to reap the child: it would die without ever being a zombie.
  await waitFor(() => comm(pid) !== "sh" && comm(parent.pid) === "sleep", "the child and its parent to exec");
  const output = () => (existsSync(out) ? readFileSync(out, "utf8") : "");
  return { pid, parent, output };
}

describe('a zombie is dead (docs/reliability.md "Shutdown and crashes")', () => {
  test("processAlive is false for a zombie, though its pid and start time still match", async () => {
    const { pid, parent } = await underNonReapingParent(["sleep", "600"], { cwd: tempDir(), env: {} });
    try {
      const start = processStart(pid)!;
      expect(processAlive(pid, start)).toBe(true);
      process.kill(pid, "SIGKILL");
      await waitFor(() => state(pid) === "Z", "the child to become a zombie");
      expect(processStart(pid)).toBe(start);
      expect(processAlive(pid, start)).toBe(false);
      expect(processAlive(pid)).toBe(false);
    } finally {
      parent.kill("SIGKILL");
    }
  });

  test("after kill -9 and an immediate restart, the deploy is interrupted and its script's process group stopped", async () => {
    const repo = makeRepo();
    const dir = tempDir("service-hold-");
    const runs = join(dir, "runs.log");
    const script = join(dir, "job.sh");
    writeFileSync(
      script,
      `#!/bin/sh\necho "start $SERVICE_DEPLOY_ID $$" >> "${runs}"\nwhile [ -n "$HOLD" ]; do sleep 0.05; done\necho end >> "${runs}"\n`,
    );
    chmodSync(script, 0o755);
    const lines = () => (existsSync(runs) ? readFileSync(runs, "utf8").trim().split("\n").filter(Boolean) : []);
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: script, SERVICE_PORT: "0" };
    const first = await underNonReapingParent(CLI, { cwd: repo.clone, env: { ...env, HOLD: "1" } });
    try {
      const port = (await waitFor(() => /listening on http:\/\/localhost:(\d+)/.exec(first.output()), "the banner"))[1];
      const stream = await post(`http://localhost:${port}`, { secret: SECRET });
      await waitFor(() => lines().length === 1, "the first deploy's script to start");
      await groupOnRecord(repo.clone, Number(lines()[0]!.split(" ")[2]));
      process.kill(first.pid, "SIGKILL");
      await stream.text().catch(() => "");
      await waitFor(() => state(first.pid) === "Z", "the killed service to be a zombie");
      const id = lines()[0]!.split(" ")[1]!;

      await using second = await startServer(repo.clone, { ...env, HOLD: "" });
      const output = () => `${second.stdout.text}${second.stderr.text}`;
      expect(output()).toContain(`deploy ${id} of ${repo.clone} was interrupted and left process group`);
      const record = logFiles(repo.clone).find((name) => name.endsWith(`${id}.json`))!;
      expect(readJson(join(repo.clone, ".service", "logs", record)).status).toBe("interrupted");
      const next = await (await post(second.url, { secret: SECRET })).text();
      expect(next.trim().split("\n").at(-1)).toBe("[done] ok=true exitCode=0");
      expect(lines().map((line) => line.split(" ")[0])).toEqual(["start", "start", "end"]);
    } finally {
      first.parent.kill("SIGKILL");
    }
  });
});
