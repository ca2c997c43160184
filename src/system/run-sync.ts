/**
 * A short command run to its end, synchronously (the start check's git queries, `id`): its exit status and its
 * output as text. Under Bun it is `Bun.spawnSync`, native, where `node:child_process` would load Bun's JavaScript
 * of it and the stream code it brings (about 2 MB of a server's idle memory: docs/performance.md); under Node.js,
 * `node:child_process` (loaded on first use). A command that cannot start has a null status.
 */
import type * as ChildProcess from "node:child_process";

export interface SyncRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

let childProcess: typeof ChildProcess | undefined;

/** `argv` in `cwd` (by default this process's), stdin closed, stdout and stderr read as UTF-8. */
export function runSync(argv: string[], options: { cwd?: string } = {}): SyncRun {
  const bun = (globalThis as { Bun?: typeof Bun }).Bun;
  if (bun) {
    try {
      const result = bun.spawnSync(argv, { cwd: options.cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      return { status: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
    } catch {
      return { status: null, stdout: "", stderr: "" };
    }
  }
  childProcess ??= require("node:child_process") as typeof ChildProcess;
  const result = childProcess.spawnSync(argv[0]!, argv.slice(1), {
    cwd: options.cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return { status: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
}
