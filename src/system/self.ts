import { resolve } from "node:path";

/**
 * How this process was started, to start the same program again (the start check, a systemd unit): the single
 * binary, bun + cli.ts, or node + the npm package's `service` command. Only Bun loads a .env by itself (and Node
 * rejects --no-env-file).
 */
export function selfCommand(): string[] {
  const script = process.argv[1];
  const compiled = !script || script.startsWith("/$bunfs/") || resolve(script) === resolve(process.execPath);
  if (compiled) return [process.execPath];
  return process.versions.bun
    ? [process.execPath, "--no-env-file", resolve(script)]
    : [process.execPath, resolve(script)];
}
