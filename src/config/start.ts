/**
 * The apps a server starts with, checked once before it listens: refused when two share a releases directory or a
 * secret cannot be used, with a warning for each weak secret and unsafe variable file.
 */
import type { Logger } from "../system/logger.ts";
import { ageIdentityProblem } from "./age.ts";
import { type AppsInForce, collectApps, type ResolvedApp } from "./apps.ts";
import { envFileWarnings } from "./env.ts";
import { ConfigError, type UserConfig } from "./schema.ts";
import type { ResolvedConfig } from "./schema-resolved.ts";
import { ensureWebhookSecret, weakSecretWarning } from "./secret.ts";

/** `config`: the server's base, whose secret a single app's start generates when none is configured. */
export function appsToStart(
  initial: ResolvedConfig,
  config: UserConfig | ResolvedConfig,
  cwd: string,
  appsInForce: AppsInForce,
  logger: Logger,
): ResolvedApp[] {
  // Two apps in one releases directory would switch and prune each other's releases (docs/releases.md).
  const { clashes } = collectApps(initial, cwd);
  if (clashes.length > 0) throw new ConfigError(clashes);
  // Also refuses a configured secret too short to use (or blank), instead of a server that answers 404 or 401.
  if (initial.apps.length === 0) ensureWebhookSecret(config, cwd);
  const apps = appsInForce.of(initial, true);
  // An age identity others can read opens every file encrypted to it: the service does not start with it.
  const loose = apps.map((app) => ageIdentityProblem(app, cwd, app.name ? `app "${app.name}": ` : "", true));
  if (loose.some(Boolean)) throw new ConfigError(loose.filter((problem): problem is string => !!problem));
  for (const app of apps) {
    const weak = app.secret && weakSecretWarning(app.secret, app.name);
    if (weak) logger.warn(weak);
    for (const warning of envFileWarnings(app, app.repoPath, cwd, app.name)) logger.warn(warning);
  }
  return apps;
}
