import { statSync } from "node:fs";
import { resolve } from "node:path";

/**
 * `--cwd DIR`: act for the service whose working directory is DIR (its config file, `.service.secret` and
 * `.service/logs/`), as the server started there would. For a shell in the repository when the service runs
 * elsewhere, as the README's server setup has it.
 */
export const cwdArg = {
  type: "string",
  valueHint: "dir",
  description:
    "The service's working directory: its config file, secrets and .service/logs (default: the current directory)",
} as const;

/** The directory `--cwd` names, absolute; the current directory without it. */
export function serviceDir(dir: string | undefined): string {
  if (dir === undefined) return process.cwd();
  const full = resolve(dir);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(full).isDirectory();
  } catch {
    throw new Error(`--cwd ${dir}: no such directory`);
  }
  if (!isDirectory) throw new Error(`--cwd ${dir}: not a directory`);
  return full;
}
