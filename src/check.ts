import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { resolveApps, appSecretFile, type ResolvedApp } from "./apps.ts";
import { findConfigFile, mergeConfig, readConfigFile, readConfigText, strictFromEnv } from "./config.ts";
import { defaultConfig, envConfig, KEYS, type UserConfig } from "./config-schema.ts";
import { queueKey, ticketDirProblem } from "./deploy/queue.ts";
import { describeOutbound, outboundProblems, type OutboundSettings } from "./notify/check.ts";
import { SECRET_FILE } from "./secret.ts";
import { parse as parseYaml } from "yaml";

export type Source = "default" | "file" | "env" | "secret file" | "generated at start";

export interface CheckedValue {
  key: string;
  /** Secrets are masked. */
  value: string;
  source: Source;
}

export interface ConfigReport {
  /** The config file in force, if any. */
  file?: string;
  values: CheckedValue[];
  /** `status` and `notify` of an app, described (tokens masked), when it has them. */
  apps: { name: string; host: string; path: string; repoPath: string; secret: string; status?: string; notify?: string }[];
  /** Everything that is wrong; the server would refuse, fall back, or fail its deploys. */
  problems: string[];
  /** Each app's `status` and `notify`, for `--send-test`. */
  outbound: OutboundSettings[];
}

const mask = (secret: string) => `set (${secret.length} characters, hidden)`;

function isGitRepo(dir: string): boolean {
  const result = spawnSync("git", ["rev-parse", "--is-inside-work-tree"], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return result.status === 0 && result.stdout.trim() === "true";
}

function repoProblems(label: string, repoPath: string): string[] {
  if (!existsSync(repoPath)) return [`${label}repoPath ${repoPath} does not exist`];
  if (!statSync(repoPath).isDirectory()) return [`${label}repoPath ${repoPath} is not a directory`];
  if (!isGitRepo(repoPath)) return [`${label}repoPath ${repoPath} is not a git repository (git pull will fail)`];
  const queue = ticketDirProblem(queueKey(repoPath));
  return queue ? [`${label}${queue}`] : [];
}

function secretSource(secret: string | undefined, file: string, configured: Source | undefined): { value: string; source: Source } {
  if (secret && configured) return { value: mask(secret), source: configured };
  if (existsSync(file)) return { value: `stored in ${file}`, source: "secret file" };
  return { value: `none yet: generated into ${file} at the first start`, source: "generated at start" };
}

/** True when the config file sets a non-empty `apps`, even one whose list was rejected as invalid. */
function fileSetsApps(file: string): boolean {
  try {
    const read = readConfigText(file);
    if (!("text" in read)) return false;
    const raw = parseYaml(read.text) as { apps?: unknown } | null;
    const apps = raw && typeof raw === "object" ? raw.apps : undefined;
    return Array.isArray(apps) ? apps.length > 0 : apps !== undefined && apps !== null;
  } catch {
    return false;
  }
}

/**
 * resolveApps stops at the first bad entry; a check must list them all, and still check the good entries'
 * repositories. An entry's validity depends only on the entries before it, so the first failing prefix names
 * the bad entry: it is recorded, swapped for a placeholder that keeps the later entries' numbers, and the
 * resolution tried again.
 */
function resolveEveryApp(config: ReturnType<typeof mergeConfig>, cwd: string, problems: string[]): ResolvedApp[] {
  const entries = [...config.apps];
  const placeholders = new Set<number>();
  for (let attempt = 0; attempt <= entries.length; attempt++) {
    try {
      return resolveApps({ ...config, apps: entries }, cwd).filter((_, index) => !placeholders.has(index));
    } catch (error) {
      problems.push((error as Error).message);
      let bad = entries.length - 1;
      for (let length = 1; length <= entries.length; length++) {
        try {
          resolveApps({ ...config, apps: entries.slice(0, length) }, cwd);
        } catch {
          bad = length - 1;
          break;
        }
      }
      if (placeholders.has(bad)) return [];
      placeholders.add(bad);
      const tag = `check-placeholder-${bad}`;
      entries[bad] = { name: tag, host: `${tag}.invalid`, path: "/", repoPath: cwd, runScript: "true" };
    }
  }
  return [];
}

/**
 * Loads the configuration exactly as the server does and reports every value with where it came from, and
 * every problem: an invalid file, unknown keys, wrong types, a missing or non-git repoPath, bad `apps`.
 */
export function checkConfig(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): ConfigReport {
  const problems: string[] = [];
  let strict = false;
  try {
    strict = strictFromEnv(env);
  } catch (error) {
    problems.push((error as Error).message);
  }
  const file = findConfigFile(cwd, env);
  let fileConfig: UserConfig = {};
  if (file) {
    const result = readConfigFile(file, problems);
    for (const warning of result.warnings) problems.push(warning.replace(/; ignored$/, ""));
    const fallback = strict ? "the server would refuse to start (strict mode)" : "the server would use environment variables and defaults only";
    if (result.invalid) problems.push(`${result.invalid} (${fallback})`);
    fileConfig = result.config ?? {};
  }
  const fromEnv = envConfig(env, problems);
  const config = mergeConfig(cwd, fileConfig, fromEnv);
  const defaults = defaultConfig(cwd);
  const values: CheckedValue[] = [];
  for (const key of Object.keys(KEYS) as (keyof UserConfig)[]) {
    if (key === "apps" || key === "secret") continue;
    const source: Source = key in fromEnv ? "env" : key in fileConfig ? "file" : "default";
    const value = config[key as keyof typeof config] ?? defaults[key as keyof typeof defaults];
    if (key === "status" || key === "notify") values.push({ key, value: describeOutbound(key, value, cwd, env), source });
    else values.push({ key, value: value === undefined ? "(none)" : String(value), source });
  }
  const apps: ConfigReport["apps"] = [];
  const outbound: OutboundSettings[] = [];
  const resolved = resolveEveryApp(config, cwd, problems);
  // An `apps` list that was rejected (its problem is listed) does not make this a single-app configuration:
  // checking the working directory as its repository would only add a misleading problem.
  const appsRejected = config.apps.length === 0 && file !== undefined && fileSetsApps(file);
  if (appsRejected) {
    // Nothing more to check without the list.
  } else if (config.apps.length === 0) {
    const configured: Source | undefined = fromEnv.secret ? "env" : fileConfig.secret ? "file" : undefined;
    const secret = secretSource(config.secret, resolve(cwd, SECRET_FILE), configured);
    values.push({ key: "secret", ...secret });
    problems.push(...repoProblems("", config.repoPath));
    outbound.push(config);
  } else {
    for (const app of resolved) {
      const secret = secretSource(app.secret, appSecretFile(cwd, app.name!), app.secret ? "file" : undefined);
      apps.push({
        name: app.name!,
        host: app.host!,
        path: app.path,
        repoPath: app.repoPath,
        secret: secret.value,
        ...(app.status ? { status: describeOutbound("status", app.status, cwd, env) } : {}),
        ...(app.notify?.length ? { notify: describeOutbound("notify", app.notify, cwd, env) } : {}),
      });
      problems.push(...repoProblems(`app "${app.name}": `, app.repoPath));
      outbound.push(app);
    }
  }
  for (const app of outbound) problems.push(...outboundProblems(app, cwd, env));
  return { file, values, apps, problems, outbound };
}
