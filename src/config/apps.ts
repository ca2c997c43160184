import { dirname, isAbsolute, join, resolve } from "node:path";
import { ChangeWatch } from "../system/change-watch.ts";
import { ensurePrivateDir } from "../system/files.ts";
import { resolveReleases } from "./releases.ts";
import { resolveGate } from "./gate.ts";
import { normalizeHost, routeTable, type RouteTable } from "./routes.ts";
import { ConfigError, SERVICE_KEYS, type AppConfig, type ServiceKey } from "./schema.ts";
import type { ResolvedConfig } from "./schema-resolved.ts";
import {
  CONFIGURED_SECRET,
  generateSecret,
  readSecretFile,
  SecretFile,
  shortSecretError,
  writeSecretFile,
} from "./secret.ts";

/** What one request deploys: an app's settings, the top level filling in what it does not set. */
export interface ResolvedApp extends Omit<ResolvedConfig, ServiceKey> {
  /** The app's name; undefined in single-app mode. */
  name?: string;
  /** Host matched against the request (lower case); undefined = any host (single-app mode). */
  host?: string;
  /** The service's build slots (a service key, the same for every app): what its deploys share. */
  maxConcurrentDeploys: number;
}

/** Where a generated app secret lives: `.service/secrets/<name>.secret` in the working directory, mode 0600. */
export function appSecretFile(cwd: string, name: string): string {
  return join(resolve(cwd), ".service", "secrets", `${name}.secret`);
}

const REQUIRED = ["name", "host", "path", "repoPath", "runScript"] as const;

/**
 * The apps a request can be routed to: every `apps` entry (validated: required fields, unique names, unique
 * host + path), or the single app of the top-level config. App secrets are never inherited from the top level.
 * Throws the first problem `collectApps` finds.
 */
export function resolveApps(config: ResolvedConfig, cwd: string): ResolvedApp[] {
  const { apps, problems } = collectApps(config, cwd);
  if (problems.length > 0) throw new ConfigError(problems[0]!);
  return apps;
}

/**
 * Every valid app and every problem at once (`service check` lists them all). An entry with a problem is left
 * out and takes no name or route, so the entries after it are judged as if it were not there.
 */
export function collectApps(
  config: ResolvedConfig,
  cwd: string,
): { apps: ResolvedApp[]; problems: string[]; clashes: string[] } {
  // The service's keys are not an app's: the admin token must not travel with a deploy.
  const { apps, secret: topSecret, maxConcurrentDeploys } = config;
  const shared = Object.fromEntries(
    Object.entries(config).filter(([key]) => key !== "secret" && !(SERVICE_KEYS as readonly string[]).includes(key)),
  ) as Omit<ResolvedConfig, ServiceKey | "secret">;
  if (apps.length === 0) {
    const short = (topSecret && shortSecretError(topSecret, CONFIGURED_SECRET)) || gateProblem(shared, "gate");
    return short
      ? { apps: [], problems: [short], clashes: [] }
      : { apps: [{ ...shared, secret: topSecret, maxConcurrentDeploys }], problems: [], clashes: [] };
  }
  const seenNames = new Map<string, number>();
  const seenRoutes = new Map<string, string>();
  const resolved: ResolvedApp[] = [];
  const problems: string[] = [];
  const clashes: string[] = [];
  for (const [index, app] of (apps as AppConfig[]).entries()) {
    const label = `apps entry ${index + 1}${app.name ? ` ("${app.name}")` : ""}`;
    const problem = appProblem(app, label, seenNames);
    if (problem) {
      problems.push(problem);
      continue;
    }
    const host = normalizeHost(app.host);
    const route = `${host}${app.path}`;
    const other = seenRoutes.get(route);
    if (other) {
      problems.push(`${label}: host "${host}" with path "${app.path}" is already the route of app "${other}"`);
      continue;
    }
    seenNames.set(app.name, index + 1);
    seenRoutes.set(route, app.name);
    const repoPath = isAbsolute(app.repoPath) ? app.repoPath : resolve(cwd, app.repoPath);
    const releases = app.releases ? resolveReleases(app.releases, cwd) : shared.releases;
    const gate = app.gate ? resolveGate(app.gate) : shared.gate;
    const entry: ResolvedApp = {
      ...shared,
      secret: undefined,
      ...app,
      host,
      repoPath,
      releases,
      gate,
      maxConcurrentDeploys,
    };
    if (!releases) delete entry.releases;
    if (!gate) delete entry.gate;
    const noGate = gateProblem(entry, `${label}: gate`);
    if (noGate) {
      problems.push(noGate);
      continue;
    }
    const clash = releasesClash(resolved, entry, label);
    if (clash) {
      problems.push(clash);
      clashes.push(clash);
      continue;
    }
    resolved.push(entry);
  }
  return { apps: resolved, problems, clashes };
}

/**
 * A gate reads the forge that `status` names, with its token (docs/configuration.md "gate"): without `status` there
 * is nothing to read. Bitbucket does not say who reported a status, so a check pinned with `by` could never pass there.
 */
function gateProblem(app: Pick<ResolvedApp, "gate" | "status">, label: string): string | undefined {
  if (!app.gate) return undefined;
  if (!app.status)
    return `${label}: reads the checks through the forge of status: set status (provider, token) for this app, or remove gate`;
  if (app.status.provider === "bitbucket" && app.gate.checks.some((check) => typeof check !== "string"))
    return `${label}: Bitbucket does not say who reported a status: "by" cannot be checked there; name the check without it`;
  return undefined;
}

/**
 * Two apps must not share one releases directory (docs/releases.md): each would prune and switch the other's
 * releases. The problem with `app` given the apps before it, or undefined.
 */
export function releasesClash(before: ResolvedApp[], app: ResolvedApp, label: string): string | undefined {
  const path = app.releases?.path;
  const other = path === undefined ? undefined : before.find((a) => a.releases?.path === path);
  if (!other) return undefined;
  return `${label}: releases.path ${path} is already the releases path of app "${other.name}": give each app its own releases (set releases in each apps entry)`;
}

/** What is wrong with one entry on its own, or with its name given the valid entries before it. */
function appProblem(app: AppConfig, label: string, seenNames: Map<string, number>): string | undefined {
  for (const field of REQUIRED) {
    if (app[field] === undefined || app[field] === "") return `${label}: "${field}" is required`;
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(app.name)) {
    return `${label}: name may only contain letters, digits, ".", "_" and "-" (it names the app's secret file)`;
  }
  if (seenNames.has(app.name))
    return `${label}: the name "${app.name}" is already used by apps entry ${seenNames.get(app.name)}`;
  // A URL or a host with a path would never equal a request's Host: say so now, not with 404s later.
  if (!/^(\[[0-9A-Fa-f:.]+\]|[^\s\x00-\x1f\x7f/:@?#[\]]+)(:\d*)?$/.test(app.host.trim())) {
    return `${label}: host ${JSON.stringify(app.host)} is not a host name: write it like web.example.com (no scheme, no path)`;
  }
  // As for the top-level secret: header values arrive trimmed, so a blank secret would lock the app out.
  if (app.secret !== undefined && app.secret !== "" && !app.secret.trim()) {
    return `${label}: the secret is blank: set a real value, or remove it to have one generated`;
  }
  return (app.secret && shortSecretError(app.secret, `${label}: the secret`)) || undefined;
}

export interface AppSecret {
  name: string;
  secret: string;
  generated: boolean;
  file: string;
}

/**
 * Gives every app without a configured secret its own: read from its secret file, or generated (CSPRNG) and
 * stored there (0600, directory 0700). Sets `app.secret`; returns what it read or generated.
 */
export function ensureAppSecrets(apps: ResolvedApp[], cwd: string): AppSecret[] {
  const out: AppSecret[] = [];
  for (const app of apps) {
    if (app.secret || app.name === undefined) continue;
    const file = appSecretFile(cwd, app.name);
    let secret = readSecretFile(file);
    const generated = secret === undefined;
    if (secret === undefined) {
      ensurePrivateDir(dirname(file));
      secret = generateSecret();
      writeSecretFile(file, secret);
    }
    app.secret = secret;
    out.push({ name: app.name, secret, generated, file });
  }
  return out;
}

/**
 * The apps in force, resolved again only when the configuration changed (so a flood of requests reads no secret
 * files); a list that became invalid keeps the last good one. Generated secrets are said once.
 */
export class AppsInForce {
  private last: ResolvedApp[] = [];
  private table: RouteTable<ResolvedApp> = new Map();
  private from: ResolvedConfig | undefined;
  /** The secret file of each app whose secret lives in one: read again when it changes (`service secret rotate`). */
  private readonly secretFiles = new Map<string, SecretFile>();
  /** Changes in `.service/secrets/`: the files are looked at only after one, or LOOK_AGAIN_MS after the last look. */
  private readonly changes = new ChangeWatch();

  constructor(
    private readonly cwd: string,
    /** The secret a single app gets when its configuration names none (the server's, or one generated at start). */
    private readonly secret: () => string | undefined,
    private readonly logger: { info(message: string): void; warn(message: string): void },
  ) {}

  /** The secret of `app` as its file says now (one stat), for a request about to deploy it. */
  lookAtSecret(app: ResolvedApp): void {
    const file = app.name === undefined ? undefined : this.secretFiles.get(app.name);
    if (file && app.secret !== undefined) app.secret = file.current();
  }

  /** One stat per app secret file; a replaced file's new secret is in force from this look on. */
  private refreshSecrets(): void {
    for (const app of this.last) this.lookAtSecret(app);
  }

  get lastGood(): ResolvedApp[] {
    return this.last;
  }

  /** The routes of the apps of the last `of`. */
  get routes(): RouteTable<ResolvedApp> {
    return this.table;
  }

  /** Stops watching (the server stopped). */
  close(): void {
    this.changes.close();
  }

  /**
   * The apps of `current`, their secret files looked at when `.service/secrets/` changed, LOOK_AGAIN_MS after the
   * last look, or with `fresh` (a request about to deploy) in any case.
   */
  of(current: ResolvedConfig, fresh = false): ResolvedApp[] {
    // The reloader hands out the same object while the configuration stays the same.
    if (current === this.from) {
      if (this.secretFiles.size > 0 && (fresh || this.changes.due())) this.refreshSecrets();
      return this.last;
    }
    this.from = current;
    try {
      const apps = resolveApps(current, this.cwd);
      if (current.apps.length === 0) apps[0]!.secret ??= this.secret();
      const fromFiles = ensureAppSecrets(apps, this.cwd);
      for (const added of fromFiles) {
        if (added.generated) this.logger.info(`generated a secret for app "${added.name}" in ${added.file}`);
        if (this.secretFiles.get(added.name)?.file !== added.file) {
          this.secretFiles.set(added.name, new SecretFile(added.file, added.secret));
          this.changes.watch(dirname(added.file));
        }
      }
      // An app whose secret is now configured (or that is gone) no longer follows a file.
      for (const name of this.secretFiles.keys())
        if (!fromFiles.some((added) => added.name === name)) this.secretFiles.delete(name);
      this.last = apps;
      this.table = routeTable(apps);
    } catch (error) {
      this.logger.warn(`${(error as Error).message}; keeping the last good list of apps`);
    }
    return this.last;
  }
}
