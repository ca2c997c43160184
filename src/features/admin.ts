/**
 * The admin listener of a server (`adminPort`), loaded only when it is configured: its token, the counters it
 * shows (nothing counts without it), and the deploys its API queues.
 */
import type { ConsolaInstance } from "consola";
import type { AdminDeploy } from "../admin/api.ts";
import { ensureAdminToken } from "../admin/auth.ts";
import { startAdminListener, type AdminListener } from "../admin/listener.ts";
import { Metrics } from "../admin/metrics.ts";
import type { ResolvedApp } from "../config/apps.ts";
import type { ResolvedConfig } from "../config/schema.ts";
import { SecretFile, weakAdminTokenWarning } from "../config/secret.ts";
import { acknowledgement, queueFull } from "../http/answers.ts";
import { boundedPort } from "../system/address.ts";

export { Metrics };

/** A deploy the service queues itself (the API's, a poll's): its id and its place in the queue. Throws QueueFullError. */
export type QueueDeploy = (
  app: ResolvedApp,
  request: Omit<AdminDeploy, "trigger"> & {
    trigger: AdminDeploy["trigger"] | "poll" | "catch-up";
    /** A poll's deploy with `paths`: the files that matched. */
    paths?: { matched: string[] };
  },
) => { id: string; position: number };

export interface AdminContext {
  cwd: string;
  logger: ConsolaInstance;
  metrics: Metrics;
  /** The apps in force now. */
  apps: () => ResolvedApp[];
  trustProxy: () => boolean;
  draining: () => boolean;
  waiting: (app: ResolvedApp) => number;
  queueDeploy: QueueDeploy;
  secrets: () => string[];
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
  const { cwd, logger } = ctx;
  const ensured = ensureAdminToken(initial.adminToken, cwd);
  if (ensured.generated) logger.info(`generated an admin token in ${ensured.file}`);
  const weak = weakAdminTokenWarning(ensured.token, ensured.file);
  if (weak) logger.warn(weak);
  const tokenFile = ensured.file ? new SecretFile(ensured.file, ensured.token) : undefined;
  const token = tokenFile ? () => tokenFile.current() : () => ensured.token;
  // The scoped tokens: every problem refuses the start, one line each (as `service check` lists them).
  const { loadTokens } = await import("../tokens/load.ts");
  const tokens = loadTokens(initial.tokens, ctx.apps(), ensured.token, cwd, (line) => logger.warn(line));
  if (tokens.problems.length > 0) throw new Error(`the tokens cannot be used:\n${tokens.problems.join("\n")}`);
  const tokenValues = () => tokens.set.current().flatMap(({ value }) => (value === undefined ? [] : [value]));
  /** A deploy asked for through the admin API: answered like an acknowledged webhook. */
  const deploy = (app: ResolvedApp, request: AdminDeploy): Response => {
    try {
      const { id, position } = ctx.queueDeploy(app, request);
      return acknowledgement(id, position, app, true);
    } catch (error) {
      return queueFull(app, error);
    }
  };
  const listener = await startAdminListener({
    port: initial.adminPort!,
    hostname: initial.adminHostname,
    bounded: boundedPort(initial.adminHostname, initial.boundConnections),
    token,
    ...(tokens.set.size > 0 ? { tokens: tokens.set } : {}),
    logger,
    cwd,
    metrics: ctx.metrics,
    apps: ctx.apps,
    trustProxy: ctx.trustProxy,
    draining: ctx.draining,
    waiting: ctx.waiting,
    deploy,
    secrets: ctx.secrets,
  });
  const host = initial.adminHostname;
  return { listener, url: `http://${host.includes(":") ? `[${host}]` : host}:${listener.port}/`, token, tokenValues };
}
