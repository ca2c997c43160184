import type { ResolvedApp } from "../config/apps.ts";
import { lastSkippedPush } from "../triggers/last-skipped.ts";
import { Redaction } from "../system/redact.ts";
import { entryOutcome, type HistoryFilter, keeps, parseFilter } from "../history/filter.ts";
import { readNoFollow } from "../system/files.ts";
import type { RollbackTarget } from "../types.ts";
import { listDeploys, newestDeploys, type HistoryEntry } from "../history/read.ts";
import { watchingOf } from "../history/watching.ts";
import { deployOf } from "./deploy-ids.ts";
import { entryUntold, releasesUntold } from "./untold.ts";
import { jsonResponse } from "../http/json.ts";
import { pauseOf } from "../queue/pause.ts";
import { catchUpStatus, freezeStatus, liveOf, pollStatus, releasesStatus, slotsStatus } from "../control/status.ts";
import type { Scope } from "../tokens/scope.ts";
import type { PreviewDoor } from "../previews/door.ts";
import { appLinks } from "../config/forge-links.ts";
import type { Metrics } from "./metrics.ts";
import type { AuditEvent } from "../audit/entry.ts";

/** What the API needs of the service around it. */
export interface AdminContext {
  cwd: string;
  /** The apps in force; single-app mode has one, named `default`. */
  apps(): ResolvedApp[];
  trustProxy(): boolean;
  draining(): boolean;
  waiting(app: ResolvedApp): number;
  /** Starts a deploy of `app` and answers like an acknowledged webhook. */
  deploy(app: ResolvedApp, request: AdminDeploy): Response;
  metrics: Metrics;
  /** Every secret no answer may carry: the admin token and the webhook secrets. */
  secrets(): string[];
  /** Whether the request's token sees the deploys of `app` (a token scoped to apps); unset: every app. */
  visible?(app: string): boolean;
  /** Writes a line of the audit trail (docs/audit.md); unset: nothing is written. */
  audit?(event: AuditEvent): void;
  /** The token is not admin: its answers name no directory of the server (untold.ts). */
  hidesPaths?: boolean;
  /** The previews of pull requests, when the server runs them (docs/previews.md). */
  previews?(): PreviewDoor | undefined;
}

/** A deploy the API asks for: a pull, a ref's commit (`target` with `ref`), or a rollback's (trigger `rollback`). */
export interface AdminDeploy {
  trigger: "api" | "rollback";
  /** `admin@<client address>`, with the session's label when it has one (`admin:alice@…`). */
  actor: string;
  /** A person signed in with an OpenID provider: the provider's subject. */
  sub?: string;
  target?: RollbackTarget;
  /** Asked with `force: true`: not held by a pause. */
  force?: boolean;
  /** Asked with `skipGate: true`: deployed without waiting for the app's gate. */
  skipGate?: boolean;
  /** Asked with `carry: false`: the release is built without carrying anything (releases.carry). */
  noCarry?: boolean;
}

export const appName = (app: ResolvedApp) => app.name ?? "default";

export const apiError = (status: number, error: string, message: string) => jsonResponse(status, { error, message });

/** A request the token's scope does not allow: 403 naming the scope (`message`), counted per token. */
export function forbidden(context: AdminContext, scope: Scope, message: string): Response {
  context.metrics.tokenRefused(scope.name);
  return apiError(403, "forbidden", message);
}

/** `GET /api/whoami`: the token's name, role and apps. */
export function whoami(scope: Scope): Response {
  return jsonResponse(200, { name: scope.name, role: scope.role, apps: scope.apps ?? null });
}

/** The app of a history entry (single-app records name none). */
const entryApp = (entry: HistoryEntry) => entry.app ?? "default";

/** Most deploys one listing returns. */
const MAX_LIMIT = 1000;

/** A JSON answer with every secret taken out of it. */
export function redactedJson(context: AdminContext, status: number, body: unknown): Response {
  const text = new Redaction(context.secrets()).text(JSON.stringify(body));
  return new Response(`${text}\n`, { status, headers: { "content-type": "application/json; charset=utf-8" } });
}

/** `GET /api/apps`. */
export async function listApps(context: AdminContext): Promise<Response> {
  const history = listDeploys(context.cwd);
  const apps = await Promise.all(
    context.apps().map(async (app) => {
      const name = appName(app);
      const last = history.find((e) => e.status !== "running" && belongsTo(e, app));
      const releases = await releasesStatus(context.cwd, app);
      return {
        name,
        ...(context.hidesPaths ? {} : { repoPath: app.repoPath }),
        branch: app.branch ?? null,
        ...(await liveOf(app, history, releases)),
        links: await appLinks(app),
        running: context.metrics.running.get(name) ?? null,
        watching: watchingOf(
          history.find((e) => e.status === "running" && e.id === context.metrics.running.get(name)?.id),
        ),
        waiting: context.waiting(app),
        last: last
          ? {
              id: last.id,
              outcome: entryOutcome(last),
              startedAt: last.startedAt,
              ageSeconds: Math.max(0, Math.round((Date.now() - Date.parse(last.startedAt)) / 1000)),
            }
          : null,
        paused: pauseOf(context.cwd, app.name) ?? false,
        ...freezeStatus(app, Date.now()),
        poll: pollStatus(context.cwd, app, Date.now()),
        releases: context.hidesPaths ? releasesUntold(releases) : releases,
        lastSkipped: lastSkippedPush(context.cwd, app.name),
        catchUp: catchUpStatus(context.cwd, app, Date.now()),
        // Only an app with previews says how many it keeps (its module loaded then only).
        ...(app.previews
          ? { previews: (await import("../previews/state.ts")).readPreviews(context.cwd, name).previews.length }
          : {}),
      };
    }),
  );
  const slots = slotsStatus(context.cwd, context.apps()[0]?.maxConcurrentDeploys ?? 0);
  // A token scoped to apps counts every slot in use, but is told the names of its own apps only.
  const visible = context.visible ?? (() => true);
  const holders = slots.holders.filter((holder) => visible(holder.app ?? "default"));
  return redactedJson(context, 200, { apps, slots: { ...slots, holders } });
}

/** Single-app records name no app: they are the `default` app's. */
const belongsTo = (entry: HistoryEntry, app: ResolvedApp) => (entry.app ?? "default") === appName(app);

/** A list's `?limit=`, `fallback` unless told: a whole number from 1 to `max`, or the 400 that says so. */
export function queryLimit(query: URLSearchParams, fallback: number, max: number): number | Response {
  const limitText = query.get("limit") ?? String(fallback);
  const limit = /^\d{1,7}$/.test(limitText) ? Number(limitText) : 0;
  if (limit <= 0 || limit > max)
    return apiError(
      400,
      "bad request",
      `limit must be a whole number from 1 to ${max}, got ${JSON.stringify(limitText.slice(0, 40))}`,
    );
  return limit;
}

/**
 * `GET /api/deploys?app=&limit=&failed=1&outcome=&since=`: the entries of `service logs --json`, newest first,
 * filtered as `service logs` filters them.
 */
export function listDeployments(context: AdminContext, query: URLSearchParams): Response {
  const limit = queryLimit(query, 20, MAX_LIMIT);
  if (limit instanceof Response) return limit;
  let filter: HistoryFilter;
  try {
    filter = parseFilter({
      app: query.get("app") ?? undefined,
      outcome: query.get("outcome") ?? undefined,
      since: query.get("since") ?? undefined,
      failed: ["1", "true", "yes"].includes(query.get("failed") ?? ""),
    });
  } catch (error) {
    return apiError(400, "bad request", (error as Error).message);
  }
  const keep = keeps(filter);
  const visible = context.visible ?? (() => true);
  const entries = newestDeploys(context.cwd, limit, (entry) => keep(entry) && visible(entryApp(entry)));
  return redactedJson(context, 200, context.hidesPaths ? entries.map(entryUntold) : entries);
}

/** `GET /api/deploys/<id>`: the deploy's JSON record. */
export function deployRecord(context: AdminContext, ref: string): Response {
  const entry = deployOf(context, ref);
  if (entry instanceof Response) return entry;
  let record: unknown;
  try {
    record = JSON.parse(readNoFollow(entry.jsonPath));
  } catch {
    return redactedJson(context, 200, { ...entry, note: entry.problem ?? "the JSON record cannot be read" });
  }
  return redactedJson(context, 200, record);
}
