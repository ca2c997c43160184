/**
 * `service init`'s files: the annotated config (ops/annotated.ts), the repository's `.gitignore` lines for the
 * service's state, and the webhook secrets (0600). It never overwrites a config file.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { appSecretFile } from "../config/apps.ts";
import { CONFIG_FILE_NAMES, findConfigFile } from "../config/load.ts";
import type { AppConfig, UserConfig } from "../config/schema.ts";
import { generateSecret, readSecretFile, SECRET_FILE, writeSecretFile } from "../config/secret.ts";
import { ensurePrivateDir } from "../system/files.ts";
import { gitQuery } from "../system/git.ts";
import { annotatedConfig } from "./annotated.ts";

/** What `service init` asked or was told. */
export interface InitChoices {
  runScript: string;
  branch?: string;
  /** Multi-app mode: these apps, each on `/<name>` of `host`, in this repository. */
  apps?: string[];
  host: string;
  releases?: string;
}

/** An app name as the multi-app form takes it (it names a file under .service/secrets/ and a URL path). */
export const APP_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;

/** The lines `.gitignore` needs so the service's state and secret are never committed. */
export const IGNORED = [".service/", SECRET_FILE];

/** The config file there is already (or that SERVICE_CONFIG names), which `service init` refuses to replace. */
export function existingConfig(cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  const found = findConfigFile(cwd, env);
  return found && existsSync(found) ? found : undefined;
}

/** The config file `service init` writes: SERVICE_CONFIG's, else `service.yaml` in `cwd`. */
export function configTarget(cwd: string, env: NodeJS.ProcessEnv): string {
  return env.SERVICE_CONFIG ? resolve(cwd, env.SERVICE_CONFIG) : join(cwd, CONFIG_FILE_NAMES[0]);
}

/** The keys `service init` sets, in the order the file shows them. */
export function chosenKeys(choices: InitChoices): Partial<UserConfig> {
  const set: Partial<UserConfig> = {};
  if (!choices.apps) set.runScript = choices.runScript;
  if (choices.branch) set.branch = choices.branch;
  set.events = ["push"];
  if (choices.apps)
    set.apps = choices.apps.map((name) => {
      const app: AppConfig = {
        name,
        host: choices.host,
        path: `/${name}`,
        repoPath: ".",
        runScript: choices.runScript,
      };
      if (choices.releases) app.releases = { path: join(choices.releases, name) };
      return app;
    });
  else if (choices.releases) set.releases = { path: choices.releases };
  return set;
}

/** A secret file: generated now, or kept as it was. */
export interface InitSecret {
  app?: string;
  file: string;
  generated: boolean;
}

export interface InitWritten {
  config: string;
  /** The `.gitignore` the lines were added to; undefined outside a repository or when they were there. */
  gitignore?: string;
  /** Whether the directory is inside a git repository (the one the service pulls, unless repoPath says otherwise). */
  inRepository: boolean;
  secrets: InitSecret[];
  /** The releases directories made now. */
  made: string[];
}

/** Writes the config (never over another), the `.gitignore` lines and the secrets. */
export async function writeInit(cwd: string, choices: InitChoices, env: NodeJS.ProcessEnv): Promise<InitWritten> {
  const there = existingConfig(cwd, env);
  if (there)
    throw new Error(`${there} exists already: service init never overwrites a config (edit it, or remove it first)`);
  const config = configTarget(cwd, env);
  try {
    writeFileSync(config, annotatedConfig(chosenKeys(choices)), { flag: "wx", mode: 0o644 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new Error(`${config} exists already: service init never overwrites a config`);
    throw new Error(`cannot write ${config} (${code ?? (error as Error).message})`);
  }
  const top = await gitQuery(cwd, ["rev-parse", "--show-toplevel"], env);
  const root = top.code === 0 && top.stdout ? top.stdout : undefined;
  const gitignore = root ? ignoreState(root, cwd) : undefined;
  const files = choices.apps
    ? choices.apps.map((app) => ({ app, file: appSecretFile(cwd, app) }))
    : [{ file: join(cwd, SECRET_FILE) }];
  const secrets = files.map((entry) => {
    if (readSecretFile(entry.file)) return { ...entry, generated: false };
    ensurePrivateDir(dirname(entry.file));
    writeSecretFile(entry.file, generateSecret());
    return { ...entry, generated: true };
  });
  // The releases' directories must exist before the first deploy (`service check` says so otherwise).
  const made: string[] = [];
  const releases = choices.releases ? (choices.apps ?? [""]).map((app) => resolve(cwd, choices.releases!, app)) : [];
  for (const dir of releases)
    if (!existsSync(dir)) {
      mkdirSync(dir, { recursive: true, mode: 0o755 });
      made.push(dir);
    }
  return { config, ...(gitignore ? { gitignore } : {}), inRepository: root !== undefined, secrets, made };
}

/** Adds IGNORED to the `.gitignore` of the repository at `root`; the file, or undefined when nothing was added. */
function ignoreState(root: string, cwd: string): string | undefined {
  const file = join(root, ".gitignore");
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const have = new Set(text.split("\n").map((line) => line.trim()));
  // From the repository's root, a pattern with a slash inside is anchored: the service directory's own path.
  const under = relative(root, cwd);
  const lines = IGNORED.map((line) => (under ? `/${under}/${line}` : line)).filter(
    (line) => !have.has(line) && !have.has(`/${line}`),
  );
  if (lines.length === 0) return undefined;
  const sep = text === "" || text.endsWith("\n") ? "" : "\n";
  appendFileSync(file, `${sep}# the deploy service's state and webhook secret\n${lines.join("\n")}\n`);
  return file;
}
