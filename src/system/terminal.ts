import { fstatSync, statSync } from "node:fs";

/**
 * Whether `fd` is a terminal, as isatty(3) says. A terminal is a character device: anything else (a pipe, a file,
 * a socket such as systemd's journal) and /dev/null are answered from one fstat, without loading node:tty (nor
 * process.stdout, which Bun builds on it: megabytes of a server's idle memory). Only another character device is
 * asked of node:tty.
 */
export async function isTerminal(fd: number): Promise<boolean> {
  try {
    const stat = fstatSync(fd);
    if (!stat.isCharacterDevice() || stat.rdev === statSync("/dev/null").rdev) return false;
  } catch {
    return false;
  }
  const { isatty } = await import("node:tty");
  return isatty(fd);
}
