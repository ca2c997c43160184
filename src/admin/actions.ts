import { readBody } from "../http/body.ts";
import type { ResolvedApp } from "../config/apps.ts";
import { cancelDeploy, cancelledBy } from "../queue/cancel.ts";
import { pause, pauseOf, resume } from "../queue/pause.ts";
import { rollbackTarget, RollbackTargetError } from "../control/rollback.ts";
import { jsonResponse } from "../http/response.ts";
import { apiError, type AdminContext } from "./api.ts";

/** Largest JSON body of an API action (`{"to": …}`, `{"reason": …}`). */
const MAX_ACTION_BODY_BYTES = 4096;

/** How the logs name who cancelled a deploy from here. */
const CANCELLED_HOW = "admin API";

/** The action's JSON object body (none is `{}`), or the error answer. */
async function jsonBody(request: Request): Promise<Record<string, unknown> | Response> {
  const read = await readBody(request, { limit: MAX_ACTION_BODY_BYTES, keep: true });
  if (!read.ok)
    return apiError(
      read.reason === "too large" ? 413 : 408,
      read.reason,
      `the request body could not be read (${read.reason}; at most ${MAX_ACTION_BODY_BYTES} bytes)`,
    );
  read.release();
  const text = Buffer.from(read.body ?? new Uint8Array())
    .toString("utf8")
    .trim();
  if (!text) return {};
  try {
    const body = JSON.parse(text) as unknown;
    if (body && typeof body === "object" && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {}
  return apiError(400, "bad request", "the body must be a JSON object");
}

/** An optional string field of the body, or the error answer. */
function field(body: Record<string, unknown>, name: string): string | undefined | Response {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") return apiError(400, "bad request", `"${name}" must be a string`);
  return value.trim() || undefined;
}

/**
 * `POST /api/apps/<app>/rollback` `{"to"?}`: as `service rollback [<to>]`, answered like an acknowledged deploy.
 * With releases, `to` may be a kept release's id (the dashboard's "switch back").
 */
export async function rollbackAction(context: AdminContext, app: ResolvedApp, request: Request): Promise<Response> {
  const body = await jsonBody(request);
  if (body instanceof Response) return body;
  const to = field(body, "to");
  if (to instanceof Response) return to;
  if (context.draining())
    return jsonResponse(
      503,
      { error: "shutting down", message: "the service is stopping and accepts no new deploys" },
      { "retry-after": "30" },
    );
  try {
    const target = await rollbackTarget(context.cwd, app, to, app.name, process.env);
    return context.deploy(app, target);
  } catch (error) {
    if (error instanceof RollbackTargetError) return apiError(409, "no rollback target", error.message);
    throw error;
  }
}

/** `POST /api/deploys/<id>/cancel`: as `service cancel <id>`; answers once the deploy took the cancel. */
export async function cancelAction(context: AdminContext, ref: string): Promise<Response> {
  try {
    const outcome = await cancelDeploy(context.cwd, ref, cancelledBy(CANCELLED_HOW));
    return jsonResponse(200, outcome);
  } catch (error) {
    const message = (error as Error).message;
    if (/is not a deploy id/.test(message)) return apiError(400, "bad request", message);
    if (/^no deploy/.test(message)) return apiError(404, "not found", message);
    return apiError(409, "cannot cancel", message);
  }
}

/** `POST /api/apps/<app>/pause` `{"reason"?}`: as `service pause`; single-app mode pauses the service. */
export async function pauseAction(context: AdminContext, app: ResolvedApp, request: Request): Promise<Response> {
  const body = await jsonBody(request);
  if (body instanceof Response) return body;
  const reason = field(body, "reason");
  if (reason instanceof Response) return reason;
  try {
    return jsonResponse(200, { paused: true, ...pause(context.cwd, { app: app.name, reason }) });
  } catch (error) {
    return apiError(400, "bad request", (error as Error).message);
  }
}

/** `POST /api/apps/<app>/resume`: as `service resume --app`; `resumed` is false when nothing was paused. */
export function resumeAction(context: AdminContext, app: ResolvedApp): Response {
  const lifted = resume(context.cwd, { app: app.name });
  // A pause of every app outlives the lifting of one app's: say so rather than answer a resume that changed nothing.
  const still = pauseOf(context.cwd, app.name);
  if (still)
    return apiError(
      409,
      "still paused",
      `the deploys of every app are paused (${still.reason}, since ${still.since}, by ${still.by}): service resume, without --app, lifts that`,
    );
  return jsonResponse(200, { resumed: lifted !== undefined, ...(lifted ? { was: lifted } : {}) });
}
