import { consola } from "consola";

/**
 * Runs a command body so that a failure reaches the user as one clear message and exit code 1, never as a
 * stack trace.
 */
export async function guard(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    consola.error((error as Error).message ?? String(error));
    process.exit(1);
  }
}

/**
 * Keeps the process alive when its output goes away: a closed terminal (an SSH session that ended) or a pipe
 * whose reader exited (`service | tee`, `service deploy | head`). Writes then fail (EIO, EPIPE) and are
 * dropped; without this, the first failed write would end the process in the middle of a deploy.
 * Returns whether standard output is still open.
 */
export function survivesClosedOutput(): () => boolean {
  let stdoutOpen = true;
  process.stdout.on("error", () => {
    stdoutOpen = false;
  });
  process.stderr.on("error", () => {});
  return () => stdoutOpen;
}

/** The signals that stop a command: Ctrl-C, `kill`, systemd, and SIGHUP when its terminal closes. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
