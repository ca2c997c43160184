import { existsSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { CONFIG_FILE_NAMES, readConfigText } from "../config/load.ts";
import { resolveConfig } from "../config/resolve.ts";
import type { DeploySettings } from "./context.ts";

/**
 * The repository's own config file (docs/configuration.md "Config from the repository"): auto-detected names, or SERVICE_CONFIG
 * when it points inside.
 */
export function repoConfigFile(repoPath: string, cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  if (env.SERVICE_CONFIG) {
    const file = resolve(cwd, env.SERVICE_CONFIG);
    const rel = relative(repoPath, file);
    const inside = rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
    return inside && existsSync(file) ? file : undefined;
  }
  return CONFIG_FILE_NAMES.map((name) => resolve(repoPath, name)).find((file) => existsSync(file));
}

/**
 * docs/configuration.md "Config from the repository": after the pull, the repository's config file (if any) decides runScript
 * and runTimeoutMs. For a single app, its top-level keys apply and SERVICE_* variables still win. For an app of multi-app mode, its own entry in
 * that file's `apps` applies when there is one, else the file's top-level keys (a repository written for one
 * app); the environment sets the top level only, so it does not override an app.
 */
export function reloadFromRepo(
  config: Pick<DeploySettings, "repoPath" | "runScript" | "runTimeoutMs">,
  cwd: string,
  env: NodeJS.ProcessEnv,
  step: (step: "config", text: string) => void,
  app?: string,
): void {
  const file = repoConfigFile(config.repoPath, cwd, env);
  if (!file) return;
  const resolved = resolveConfig({ cwd, file: { path: file, read: readConfigText(file) }, env: app ? {} : env });
  // A wrong SERVICE_* value leaves the environment out here, as it does for the whole server.
  const fromEnv = resolved.envErrors.length > 0 ? {} : resolved.envConfig;
  const problem = resolved.invalid ?? (resolved.fileErrors.length > 0 ? resolved.fileErrors[0]!.join("\n") : undefined);
  if (problem || !resolved.fileConfig) {
    step("config", `${problem}; keeping the current run script and timeout`);
    return;
  }
  const fileApps = resolved.fileConfig.apps ?? [];
  const source = app && fileApps.length > 0 ? fileApps.find((entry) => entry.name === app) : resolved.fileConfig;
  if (!source) return;
  config.runScript = fromEnv.runScript ?? source.runScript ?? config.runScript;
  config.runTimeoutMs = fromEnv.runTimeoutMs ?? source.runTimeoutMs ?? config.runTimeoutMs;
  step("config", `loaded ${file}`);
}
