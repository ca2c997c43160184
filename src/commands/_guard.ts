import { readFileSync } from "node:fs";

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

/**
 * Ends a command that only prints (`service logs`) quietly when its reader goes away: `service logs --follow |
 * head` has what it asked for once head exits, and the next write fails with EPIPE. Without this, that failure
 * is an unhandled error with a stack trace. A closed pipe exits 0, as a reader that stopped early is no error;
 * another failed write (EIO: the terminal went away) exits 1.
 */
export function endsWhenOutputCloses(): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    process.exit(error.code === "EPIPE" ? 0 : 1);
  });
  process.stderr.on("error", () => {});
}

/**
 * Whether this process started with SIGHUP ignored, as `nohup service &` starts it (Linux: the SigIgn mask of
 * /proc/self/status). A handler would undo that, and the logout nohup is for would stop the service.
 */
function hangupIgnored(): boolean {
  try {
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & 1n) === 1n;
  } catch {
    return false;
  }
}

/** The signals that stop a command: Ctrl-C, `kill`, systemd, and SIGHUP when its terminal closes (unless nohup). */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = hangupIgnored()
  ? ["SIGINT", "SIGTERM"]
  : ["SIGINT", "SIGTERM", "SIGHUP"];
