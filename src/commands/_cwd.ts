import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { KEYS } from "../config/keys.ts";
import { CONFIG_FILE_NAMES, findConfigFile } from "../config/load.ts";
import { SECRET_FILE } from "../config/secret.ts";

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

/**
 * The service directory of a control command (`pause`, `resume`, `status`, `cancel`): the one `--cwd` names, or
 * the current one. Throws when nothing there belongs to a service (no config file, no `.service/` state, no
 * `.service.secret`, no SERVICE_* setting): run in the application's repository instead of the service's
 * directory, a pause would be written where no server reads it, and a status would describe a service that
 * does not exist. Nothing is created before this check.
 */
export function controlDir(dir: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const cwd = serviceDir(dir);
  const configured = Object.values(KEYS).some((key) => key.env !== "" && env[key.env] !== undefined);
  if (
    configured ||
    findConfigFile(cwd, env) ||
    existsSync(resolve(cwd, ".service")) ||
    existsSync(resolve(cwd, SECRET_FILE))
  )
    return cwd;
  throw new Error(
    `no service in ${cwd}: no config file (${CONFIG_FILE_NAMES[0]}), no .service/ state and no SERVICE_* settings; run the command in the service's working directory, or name it with --cwd DIR`,
  );
}
