/** The tokens of a configuration, checked and read as the start and `service check` both do it. */
import type { ResolvedApp } from "../config/apps.ts";
import { adminTokenIn, appSecretOf } from "../config/deploy-secrets.ts";
import {
  describeTokens,
  parseTokens,
  readTokenFile,
  readTokens,
  type Reserved,
  type RotationGuard,
  TokenSet,
  type TokenSpec,
} from "./list.ts";

/** The secrets no token may equal: the admin token and every app's webhook secret. */
export function reservedSecrets(adminToken: string | undefined, apps: ResolvedApp[], cwd: string): Reserved[] {
  const out: Reserved[] = adminToken ? [{ what: "the admin token", value: adminToken }] : [];
  for (const app of apps) {
    const secret = appSecretOf(app, cwd);
    const what = app.name === undefined ? "the webhook secret" : `the webhook secret of app "${app.name}"`;
    if (secret) out.push({ what, value: secret });
  }
  return out;
}

export interface LoadedTokens {
  specs: TokenSpec[];
  set: TokenSet;
  /** Each a line of its own; any refuses the start. */
  problems: string[];
  /** Their names, roles and apps, for `service check`. */
  described: string;
}

/**
 * The `tokens` key of the service's config, for `apps`, read now; `adminToken` the one in force (unset: the one
 * in `.service/admin.token`, if any).
 */
export function loadTokens(
  entries: unknown,
  apps: ResolvedApp[],
  adminToken: string | undefined,
  cwd: string,
  warn: (line: string) => void = () => {},
  changed?: RotationGuard["changed"],
): LoadedTokens {
  const problems: string[] = [];
  const names = apps.map((app) => app.name ?? "default");
  const specs = parseTokens(entries, names, cwd, problems);
  const admin = adminToken?.trim() || adminTokenIn(cwd);
  const reserved = () => reservedSecrets(admin, apps, cwd);
  const values = readTokens(specs, reserved(), problems);
  return {
    specs,
    set: new TokenSet(specs, values, { reserved, warn, ...(changed ? { changed } : {}) }),
    problems,
    described: describeTokens(specs),
  };
}

/** The values of the `tokens` whose files can be read now: what no deploy's output may carry (`service deploy`). */
export function tokenSecrets(entries: unknown, apps: ResolvedApp[], cwd: string): string[] {
  const specs = parseTokens(
    entries,
    apps.map((app) => app.name ?? "default"),
    cwd,
    [],
  );
  return specs.flatMap((spec) => {
    const read = readTokenFile(spec);
    return "value" in read ? [read.value] : [];
  });
}
