/**
 * The admin listener of a server (`adminPort`), loaded only when it is configured: its token, the counters it
 * shows (nothing counts without it), and the deploys its API queues.
 */
import { resolve } from "node:path";
import type { Logger } from "../system/logger.ts";
import type { AdminDeploy } from "../admin/api.ts";
import type { PreviewDoor } from "../previews/door.ts";
import { ensureAdminToken } from "../admin/auth.ts";
import { startAdminListener, type AdminListener, type AdminOptions } from "../admin/listener.ts";
import { Metrics } from "../admin/metrics.ts";
import type { ResolvedApp } from "../config/apps.ts";
import type { PathsRecord } from "../history/record.ts";
import type { DeploymentInfo } from "../types.ts";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import { SecretFile, weakAdminTokenWarning } from "../config/secret.ts";
import { acknowledgement, queueFull } from "../http/answers.ts";
import { boundedPort } from "../system/address.ts";
import type { AuditEvent } from "../audit/entry.ts";

export { Metrics };

/** A deploy the service queues itself (the API's, a poll's): its id and its place in the queue. Throws QueueFullError. */
export type QueueDeploy = (
  app: ResolvedApp,
  request: Omit<AdminDeploy, "trigger" | "actor"> & {
    trigger: AdminDeploy["trigger"] | "poll" | "catch-up" | "recovered";
    actor: string | null;
    /** A poll's deploy with `paths`: the files that matched (a replayed request's, as it was decided). */
    paths?: PathsRecord;
    /** A replayed request (requests/replay.ts): its own id, and what it named. */
    id?: string;
    pushed?: string;
    deployment?: DeploymentInfo;
    event?: string | null;
    delivery?: string | null;
  },
) => { id: string; position: number };

export interface AdminContext {
  cwd: string;
  logger: Logger;
  metrics: Metrics;
  /** The apps in force now. */
  apps: () => ResolvedApp[];
  trustProxy: () => boolean;
  /** The configuration in force now (its `tokens` are followed). */
  config: () => ResolvedConfig;
  draining: () => boolean;
  waiting: (app: ResolvedApp) => number;
  queueDeploy: QueueDeploy;
  secrets: () => string[];
  /** Writes a line of the audit trail. */
  audit: (event: AuditEvent) => void;
  /** The previews of pull requests, when the server runs them. */
  previews?: () => PreviewDoor | undefined;
}

export interface StartedAdmin {
  listener: AdminListener;
  url: string;
  /** The admin token in force: a generated one follows its file (`service admin-token rotate`). */
  token: () => string;
  /** The values of the scoped tokens in force (`tokens`): no output may carry them either. */
  tokenValues: () => string[];
}

/** Starts the second listener, on `adminPort`: it reads the same apps, queue and counters. */
export async function startAdmin(initial: ResolvedConfig, ctx: AdminContext): Promise<StartedAdmin> {
  try {
    return await openAdmin(initial, ctx);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE")
      throw new Error(
        `the admin port ${initial.adminPort} is already in use: choose another with SERVICE_ADMIN_PORT or the adminPort key`,
        { cause: error },
      );
    throw error;
  }
}

async function openAdmin(initial: ResolvedConfig, ctx: AdminContext): Promise<StartedAdmin> {
  const { cwd, logger } = ctx;
  const ensured = ensureAdminToken(initial.adminToken, cwd);
  if (ensured.generated) logger.info(`generated an admin token in ${ensured.file}`);
  const weak = weakAdminTokenWarning(ensured.token, ensured.file);
  if (weak) logger.warn(weak);
  const tokenFile = ensured.file ? new SecretFile(ensured.file, ensured.token) : undefined;
  // A token's file changed: the audit says so (the names only), whether the admin token or a scoped one.
  const changed = (name: string, how: "added" | "rotated" | "revoked") =>
    ctx.audit({ actor: "service", action: `token ${how}`, target: name, outcome: "ok" });
  let adminValue = ensured.token;
  const token = tokenFile
    ? () => {
        const value = tokenFile.current();
        if (value !== adminValue) changed("admin", "rotated");
        adminValue = value;
        return value;
      }
    : () => ensured.token;
  // The scoped tokens: every problem refuses the start, one line each (as `service check` lists them).
  const { loadTokens } = await import("../tokens/load.ts");
  const tokens = loadTokens(initial.tokens, ctx.apps(), ensured.token, cwd, (line) => logger.warn(line), changed);
  if (tokens.problems.length > 0) throw new Error(`the tokens cannot be used:\n${tokens.problems.join("\n")}`);
  // From then on, the entries follow the config file (`service token add`, `revoke`): no restart.
  const { FollowedTokens } = await import("../tokens/follow.ts");
  const followed = new FollowedTokens(
    {
      entries: () => ctx.config().tokens,
      appNames: () => {
        const { apps } = ctx.config();
        return apps.length > 0 ? apps.map((app) => app.name) : ["default"];
      },
      apps: ctx.apps,
      adminToken: token,
      cwd,
      info: (line) => logger.info(line),
      warn: (line) => logger.warn(line),
    },
    tokens.specs,
    tokens.set,
  );
  const people = await peopleOf(initial, ctx);
  const tokenValues = () => followed.current().flatMap(({ value }) => (value === undefined ? [] : [value]));
  /** A deploy asked for through the admin API: answered like an acknowledged webhook. */
  const deploy = (app: ResolvedApp, request: AdminDeploy): Response => {
    try {
      const { id, position } = ctx.queueDeploy(app, request);
      return acknowledgement(id, position, app, true);
    } catch (error) {
      return queueFull(app, error);
    }
  };
  const context = {
    cwd,
    metrics: ctx.metrics,
    apps: ctx.apps,
    trustProxy: ctx.trustProxy,
    draining: ctx.draining,
    waiting: ctx.waiting,
    deploy,
    secrets: ctx.secrets,
    audit: ctx.audit,
    ...(ctx.previews ? { previews: ctx.previews } : {}),
  };
  // The agents' endpoint (`adminMcp`): the MCP SDK is loaded only then.
  const mcp = initial.adminMcp
    ? (await import("../mcp/endpoint.ts")).mcpEndpoint(initial.adminMcp, context)
    : undefined;
  const listener = await startAdminListener({
    port: initial.adminPort!,
    hostname: initial.adminHostname,
    bounded: boundedPort(initial.adminHostname, initial.boundConnections),
    token,
    tokens: followed,
    ...(mcp ? { mcp } : {}),
    ...people,
    people: ctx.config,
    sessionHours: initial.adminSessionHours,
    kioskDays: initial.adminKioskDays,
    logger,
    ...context,
  });
  const host = initial.adminHostname;
  return { listener, url: `http://${host.includes(":") ? `[${host}]` : host}:${listener.port}/`, token, tokenValues };
}

/**
 * `adminOidc` and `adminTrustedHeader`, each loaded only when configured: their checks (a problem refuses the
 * start, a role open to anyone is warned of), the provider's sign-in and the proxy's user. Their secrets are kept
 * out of every output by config/deploy-secrets.ts.
 */
async function peopleOf(initial: ResolvedConfig, ctx: AdminContext) {
  const { adminOidc: oidc, adminTrustedHeader: trusted } = initial;
  const options: Pick<AdminOptions, "oidc" | "trusted"> = {};
  if (!oidc && !trusted) return options;
  const { checkPeople, callbackUrl } = await import("../people/check.ts");
  const names = ctx.apps().map((app) => app.name ?? "default");
  const checked = checkPeople(initial, names, ctx.cwd);
  if (checked.problems.length > 0)
    throw new Error(`the sign-in settings cannot be used:\n${checked.problems.join("\n")}`);
  for (const line of checked.warnings) ctx.logger.warn(line);
  const { FollowedSecret } = await import("../people/secret-file.ts");
  if (oidc) {
    const { OidcLogin, SIGN_IN_COOKIE } = await import("../people/oidc.ts");
    const file = resolve(ctx.cwd, oidc.clientSecretFile);
    const secret = new FollowedSecret(file, `adminOidc.clientSecretFile: ${file}`);
    const login = new OidcLogin(oidc, secret);
    options.oidc = { login, redirectUri: callbackUrl(initial.adminPublicUrl!), cookie: SIGN_IN_COOKIE };
  }
  if (trusted) {
    const { TrustedHeader } = await import("../people/trusted-header.ts");
    const settings = () => ctx.config().adminTrustedHeader;
    options.trusted = new TrustedHeader(
      () => settings() && { ...settings()!, secretFile: resolve(ctx.cwd, trusted.secretFile) },
    );
  }
  return options;
}
