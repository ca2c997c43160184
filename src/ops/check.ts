import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { appSecretFile, collectApps, type ResolvedApp } from "../config/apps.ts";
import { findConfigFile, readConfigText, strictFromEnv } from "../config/load.ts";
import { KEYS } from "../config/keys.ts";
import { SERVICE_KEYS, type UserConfig } from "../config/schema.ts";
import type { OutboundSettings } from "../notify/inspect.ts";
import { resolveConfig, type Source as ValueSource } from "../config/resolve.ts";
import { SECRET_FILE, weakSecretWarning } from "../config/secret.ts";
import { describeEnv } from "../config/env.ts";
import { describeFreeze } from "../config/freeze.ts";
import { cloneFindings, featuresOf, releasesProblems, repoProblems } from "./check-app.ts";
import { guardFindings, type GuardedApp } from "./check-guard.ts";
import { pathsWarnings, sharedCloneWarnings } from "../triggers/check.ts";
import { appSettings, describeReleases, withoutPassword } from "./check-describe.ts";
import { describeGate } from "../config/gate.ts";
import { describeBoundConnections, listenerWarnings } from "./check-listeners.ts";
import { describeLimits, limitsProblem } from "../steps/limits.ts";
import { describeAudit } from "../config/audit.ts";

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
  /** The build slots in words: `2 (the CPUs of this machine)`, `3`, `no limit`. */
  slots: string;
  /** `status` and `notify` of an app, described (tokens masked), when it has them. */
  apps: {
    name: string;
    host: string;
    path: string;
    repoPath: string;
    secret: string;
    /** What decides the app's deploys, one line each, in order: run, branch, events, health check, rollback, polling. */
    settings: { label: string; value: string }[];
    status?: string;
    notify?: string;
    /** The names of the deploy's variables (never their values). */
    env?: string;
    allowedSigners?: string;
    /** The releases in force (docs/releases.md), described. */
    releases?: string;
  }[];
  /** Everything that is wrong; the server would refuse, fall back, or fail its deploys. */
  problems: string[];
  /** What works but is unsafe (a short secret); the server says it at start too. */
  warnings: string[];
  /** Each app's `status` and `notify`, for `--send-test`. */
  outbound: OutboundSettings[];
  /** Each app's guard keys, for the check of its HEAD (check-guard.ts). */
  guarded: GuardedApp[];
}

const mask = (secret: string) => `set (${secret.length} characters, hidden)`;

function secretSource(
  secret: string | undefined,
  file: string,
  configured: Source | undefined,
): { value: string; source: Source } {
  if (secret && configured) return { value: mask(secret), source: configured };
  if (existsSync(file)) return { value: `stored in ${file}`, source: "secret file" };
  return { value: `none yet: generated into ${file} at the first start`, source: "generated at start" };
}

/** A `tags` that is no rule (a range that does not parse); triggers/tags.ts is loaded only for an app that has one. */
async function tagsProblems(apps: { name?: string; tags?: string }[]): Promise<string[]> {
  if (!apps.some((app) => app.tags !== undefined)) return [];
  const { tagsRule } = await import("../triggers/tags.ts");
  return apps.flatMap((app) => {
    const rule = app.tags === undefined ? undefined : tagsRule(app.tags);
    return typeof rule === "string" ? [`${app.name ? `app "${app.name}": ` : ""}${rule}`] : [];
  });
}

/**
 * Loads the configuration exactly as the server does and reports every value with where it came from, and
 * every problem: an invalid file, unknown keys, wrong types, a missing or non-git repoPath, bad `apps`.
 */
export async function checkConfig(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): Promise<ConfigReport> {
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
  const valid = collectApps(config, cwd);
  const features = await featuresOf([config, ...valid.apps]);
  const values: CheckedValue[] = [];
  // The watch's query run once (docs/watch.md), loaded only for a configuration that has one.
  const watched = new Map<object, { value: string; warning?: string }>();
  for (const app of (config.apps.length === 0 ? [config] : valid.apps).filter((each) => each.watch))
    watched.set(app, await (await import("./check-watch.ts")).checkWatch(app, cwd, env));
  warnings.push(...[...watched.values()].flatMap((each) => (each.warning ? [each.warning] : [])));
  // The scoped tokens (loaded only when set): their names, roles and apps, never their values; their problems.
  const tokens = config.tokens
    ? (await import("../tokens/load.ts")).loadTokens(
        config.tokens,
        config.apps.length === 0 ? [config as ResolvedApp] : valid.apps,
        config.adminToken,
        cwd,
      )
    : undefined;
  if (tokens) problems.push(...tokens.problems);
  // The people's sign-in (loaded only when set): their secrets' files, apps, roles open to anyone.
  const names = config.apps.length === 0 ? ["default"] : valid.apps.map((app) => app.name ?? "default");
  const people =
    config.adminOidc || config.adminTrustedHeader
      ? (await import("../people/check.ts")).checkPeople(config, names, cwd)
      : undefined;
  if (people) problems.push(...people.problems);
  if (people) warnings.push(...people.warnings);
  // In multi-app mode a top-level value that every apps entry sets for itself is used by no app: not shown.
  const entries = config.apps as unknown as Record<string, unknown>[];
  const unused = (key: string) =>
    entries.length > 0 &&
    !(SERVICE_KEYS as readonly string[]).includes(key) &&
    entries.every((entry) => entry[key] !== undefined);
  for (const key of Object.keys(KEYS) as (keyof UserConfig)[]) {
    if (key === "apps" || key === "secret" || unused(key)) continue;
    const value = config[key as keyof typeof config];
    const shown =
      key === "status" || key === "notify"
        ? (features.outbound?.describeOutbound(key, value, cwd, env) ?? "(none)")
        : key === "env"
          ? (describeEnv(config, cwd) ?? "(none)")
          : key === "releases"
            ? describeReleases(config.releases)
            : key === "freeze"
              ? describeFreeze(config.freeze)
              : key === "audit"
                ? describeAudit(config.audit)
                : key === "watch"
                  ? (watched.get(config)?.value ?? "(none)")
                  : key === "gate"
                    ? config.gate
                      ? describeGate(config.gate)
                      : "(none)"
                    : key === "limits"
                      ? describeLimits(config.limits) || "(none)"
                      : key === "boundConnections"
                        ? describeBoundConnections(config)
                        : key === "tokens" && tokens
                          ? tokens.described
                          : key === "adminOidc" || key === "adminTrustedHeader"
                            ? (people?.described[key] ?? "(none)")
                            : value === undefined
                              ? "(none)"
                              : key === "adminToken"
                                ? mask(String(value))
                                : key === "healthCheckUrl"
                                  ? withoutPassword(String(value))
                                  : String(value);
    values.push({ key, value: shown, source: sources[key] ?? "default" });
  }
  warnings.push(...listenerWarnings(config, cwd));
  const apps: ConfigReport["apps"] = [];
  const outbound: OutboundSettings[] = [];
  const guarded: GuardedApp[] = [];
  problems.push(...valid.problems);
  const servicePorts = [config.port, config.adminPort].filter((port): port is number => typeof port === "number");
  // Loaded only when an app sets previews: a plain check holds none of their code.
  const previewsFindings =
    config.previews || valid.apps.some((app) => app.previews)
      ? (await import("../previews/check.ts")).previewsFindings
      : () => ({ problems: [], warnings: [] });
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
    problems.push(...repoProblems("", config, features.poll));
    const limits = limitsProblem(config.limits);
    if (limits) problems.push(limits);
    const clone = await cloneFindings("", config, env);
    problems.push(...clone.problems);
    warnings.push(...clone.warnings);
    warnings.push(...(await pathsWarnings(cwd, "", config, env)));
    const releases = releasesProblems("", config, features.releaseFiles);
    problems.push(...releases.problems);
    warnings.push(...releases.warnings);
    const previews = previewsFindings("", config, { cwd, ports: servicePorts });
    problems.push(...previews.problems);
    warnings.push(...previews.warnings);
    outbound.push(config);
    guarded.push(config);
  } else {
    for (const app of valid.apps) {
      const secret = secretSource(app.secret, appSecretFile(cwd, app.name!), app.secret ? "file" : undefined);
      apps.push({
        name: app.name!,
        host: app.host!,
        path: app.path,
        repoPath: app.repoPath,
        secret: secret.value,
        settings: [...appSettings(app), ...(app.watch ? [{ label: "watch", value: watched.get(app)!.value }] : [])],
        ...(app.status
          ? { status: features.outbound!.describeOutbound("status", app.status, cwd, env, app.name) }
          : {}),
        ...(app.notify?.length ? { notify: features.outbound!.describeOutbound("notify", app.notify, cwd, env) } : {}),
        ...(app.env || app.envFile ? { env: describeEnv(app, cwd) } : {}),
        ...(app.allowedSigners ? { allowedSigners: resolve(cwd, app.allowedSigners) } : {}),
        ...(app.releases ? { releases: describeReleases(app.releases) } : {}),
      });
      const weak = app.secret && weakSecretWarning(app.secret, app.name);
      if (weak) warnings.push(weak);
      problems.push(...repoProblems(`app "${app.name}": `, app, features.poll));
      const limits = limitsProblem(app.limits);
      if (limits) problems.push(`app "${app.name}": ${limits}`);
      const clone = await cloneFindings(`app "${app.name}": `, app, env);
      problems.push(...clone.problems);
      warnings.push(...clone.warnings);
      warnings.push(...(await pathsWarnings(cwd, `app "${app.name}": `, app, env)));
      const releases = releasesProblems(`app "${app.name}": `, app, features.releaseFiles);
      problems.push(...releases.problems);
      warnings.push(...releases.warnings);
      const previews = previewsFindings(`app "${app.name}": `, app, { cwd, ports: servicePorts });
      problems.push(...previews.problems);
      warnings.push(...previews.warnings);
      outbound.push(app);
      guarded.push(app);
    }
  }
  warnings.push(...sharedCloneWarnings(valid.apps));
  for (const settings of outbound) problems.push(...(features.outbound?.outboundProblems(settings, cwd, env) ?? []));
  for (const app of guarded) {
    const found = guardFindings(app, cwd);
    problems.push(...found.problems);
    warnings.push(...found.warnings);
  }
  problems.push(...(await tagsProblems(config.apps.length === 0 ? [config] : valid.apps)));
  const limit = config.maxConcurrentDeploys;
  const slots =
    limit === 0
      ? "no limit"
      : sources.maxConcurrentDeploys === "default"
        ? `${limit} (the CPUs of this machine)`
        : String(limit);
  return { file, values, slots, apps, problems, warnings, outbound, guarded };
}
