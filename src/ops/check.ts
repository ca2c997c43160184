import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { appSecretFile, collectApps } from "../config/apps.ts";
import { findConfigFile, readConfigText, strictFromEnv } from "../config/load.ts";
import { KEYS } from "../config/keys.ts";
import type { UserConfig } from "../config/schema.ts";
import { queueKey, ticketDirProblem } from "../queue/tickets.ts";
import { describeOutbound, outboundProblems, type OutboundSettings } from "../notify/inspect.ts";
import { pollTargetOf, TARGET_QUERIES } from "../control/poll.ts";
import { resolveConfig, type Source as ValueSource } from "../config/resolve.ts";
import { SECRET_FILE, weakSecretWarning } from "../config/secret.ts";
import { wantedBranch } from "../deploy/verify-push.ts";

export type Source = ValueSource | "secret file" | "generated at start";

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
  apps: {
    name: string;
    host: string;
    path: string;
    repoPath: string;
    secret: string;
    status?: string;
    notify?: string;
  }[];
  /** Everything that is wrong; the server would refuse, fall back, or fail its deploys. */
  problems: string[];
  /** What works but is unsafe (a short secret); the server says it at start too. */
  warnings: string[];
  /** Each app's `status` and `notify`, for `--send-test`. */
  outbound: OutboundSettings[];
}

const mask = (secret: string) => `set (${secret.length} characters, hidden)`;

function isGitRepo(dir: string): boolean {
  const result = spawnSync("git", ["rev-parse", "--is-inside-work-tree"], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  return result.status === 0 && result.stdout.trim() === "true";
}

function repoProblems(label: string, app: { repoPath: string; pollIntervalMs?: number; branch?: string }): string[] {
  const { repoPath } = app;
  if (!existsSync(repoPath)) return [`${label}repoPath ${repoPath} does not exist`];
  if (!statSync(repoPath).isDirectory()) return [`${label}repoPath ${repoPath} is not a directory`];
  if (!isGitRepo(repoPath)) return [`${label}repoPath ${repoPath} is not a git repository (git pull will fail)`];
  const queue = ticketDirProblem(queueKey(repoPath));
  const problems = queue ? [`${label}${queue}`] : [];
  const mismatch = branchMismatch(repoPath, app.branch);
  if (mismatch) problems.push(`${label}${mismatch}`);
  if (app.pollIntervalMs !== undefined) {
    const answers = TARGET_QUERIES.map((args) => {
      const result = spawnSync("git", args, { cwd: repoPath, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
      return { code: result.status, stdout: result.stdout ?? "" };
    });
    const target = pollTargetOf(repoPath, app.branch, answers);
    if (typeof target === "string") problems.push(`${label}pollIntervalMs is set but ${target}`);
  }
  return problems;
}

/**
 * A checkout on another branch than `branch` (docs/deploy-control.md "What was pushed"): every deploy is refused
 * until it is checked out again. Undefined when it is on it, or `branch` names no branch.
 */
function branchMismatch(repoPath: string, branch: string | undefined): string | undefined {
  const wanted = wantedBranch(branch);
  if (!wanted) return undefined;
  const result = spawnSync("git", ["symbolic-ref", "--quiet", "--short", "HEAD"], {
    cwd: repoPath,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  const current = result.status === 0 ? result.stdout.trim() : null;
  if (current === wanted) return undefined;
  const where = current ? `is on branch ${current}` : "is not on a branch (detached HEAD)";
  return `the checkout in ${repoPath} ${where}, but branch is ${wanted}: every deploy is refused until git -C ${repoPath} checkout ${wanted}`;
}

function secretSource(
  secret: string | undefined,
  file: string,
  configured: Source | undefined,
): { value: string; source: Source } {
  if (secret && configured) return { value: mask(secret), source: configured };
  if (existsSync(file)) return { value: `stored in ${file}`, source: "secret file" };
  return { value: `none yet: generated into ${file} at the first start`, source: "generated at start" };
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
  const warnings: string[] = [];
  const file = findConfigFile(cwd, env);
  const resolved = resolveConfig({ cwd, file: file ? { path: file, read: readConfigText(file) } : undefined, env });
  const { config, sources } = resolved;
  problems.push(...resolved.fileErrors.flat(), ...resolved.unknownKeys);
  const fallback = strict
    ? "the server would refuse to start (strict mode)"
    : "the server would use environment variables and defaults only";
  if (resolved.invalid) problems.push(`${resolved.invalid} (${fallback})`);
  problems.push(...resolved.envErrors);
  const values: CheckedValue[] = [];
  for (const key of Object.keys(KEYS) as (keyof UserConfig)[]) {
    if (key === "apps" || key === "secret") continue;
    const value = config[key as keyof typeof config];
    const shown =
      key === "status" || key === "notify"
        ? describeOutbound(key, value, cwd, env)
        : value === undefined
          ? "(none)"
          : key === "adminToken"
            ? mask(String(value))
            : String(value);
    values.push({ key, value: shown, source: sources[key] ?? "default" });
  }
  const apps: ConfigReport["apps"] = [];
  const outbound: OutboundSettings[] = [];
  const valid = collectApps(config, cwd);
  problems.push(...valid.problems);
  // An `apps` list that was rejected (its problem is listed) does not make this a single-app configuration:
  // checking the working directory as its repository would only add a misleading problem.
  if (config.apps.length === 0 && resolved.setsApps) {
    // Nothing more to check without the list.
  } else if (config.apps.length === 0) {
    const configured = sources.secret === "env" || sources.secret === "file" ? sources.secret : undefined;
    const secret = secretSource(config.secret, resolve(cwd, SECRET_FILE), configured);
    values.push({ key: "secret", ...secret });
    const weak = config.secret && weakSecretWarning(config.secret);
    if (weak) warnings.push(weak);
    problems.push(...repoProblems("", config));
    outbound.push(config);
  } else {
    for (const app of valid.apps) {
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
      const weak = app.secret && weakSecretWarning(app.secret, app.name);
      if (weak) warnings.push(weak);
      problems.push(...repoProblems(`app "${app.name}": `, app));
      outbound.push(app);
    }
  }
  for (const settings of outbound) problems.push(...outboundProblems(settings, cwd, env));
  return { file, values, apps, problems, warnings, outbound };
}
