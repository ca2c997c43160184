import { readBody } from "../http/body.ts";
import type { ResolvedApp } from "../config/apps.ts";
import { cancelDeploy, cancelledBy } from "../queue/cancel.ts";
import { pause, pauseOf, resume } from "../queue/pause.ts";
import { freezeOf, frozenText } from "../deploy/frozen.ts";
import { DeployRefError, deployRefTarget, tagsTarget } from "../control/deploy-ref.ts";
import { rollbackTarget, RollbackTargetError } from "../control/rollback.ts";
import { jsonResponse } from "../http/json.ts";
import type { RollbackTarget } from "../types.ts";
import { refusal as scopeRefusal, type Scope, sees } from "../tokens/scope.ts";
import { isDeployRef, type HistoryEntry } from "../history/read.ts";
import { apiError, appName, forbidden, type AdminContext } from "./api.ts";
import { namedDeploy, noDeploy } from "./deploy-ids.ts";

/** What an action was asked, as the audit trail says it: its ref or target, and the overrides. */
export interface Asked {
  target?: string;
  force?: boolean;
  skipGate?: boolean;
}

/** Largest JSON body of an API action (`{"to": …}`, `{"ref": …}`, `{"reason": …}`). */
const MAX_ACTION_BODY_BYTES = 4096;

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

/** An optional boolean field of the body, or the error answer. */
function flag(body: Record<string, unknown>, name: string): boolean | Response {
  const value = body[name];
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean") return apiError(400, "bad request", `"${name}" must be true or false`);
  return value;
}

const SHUTTING_DOWN = { error: "shutting down", message: "the service is stopping and accepts no new deploys" };

/** The deploys `scope` sees, for the one lookup of a deploy it names. */
const seenBy = (context: AdminContext, scope: Scope) => ({
  cwd: context.cwd,
  ...(scope.apps ? { visible: (app: string) => sees(scope, app) } : {}),
});

/**
 * The deploy a `ref` or `to` names among those the token sees (null: none, so it is a tag, a branch, a commit), or
 * the answer: a prefix of several, or a deploy still queued (it tried no commit yet).
 */
function deployNamed(context: AdminContext, scope: Scope, value: string): HistoryEntry | null | Response {
  if (value === "last" || value.length < 4 || !isDeployRef(value)) return null;
  const named = namedDeploy(seenBy(context, scope), value);
  if (named instanceof Response || !named) return named ?? null;
  return named.entry ?? apiError(409, "queued", `deploy ${named.id} is queued: it has tried no commit yet`);
}

/** An error's message as a token that is not admin is told it: the server's directories left out. */
function told(context: AdminContext, scope: Scope, app: ResolvedApp, message: string): string {
  if (scope.role === "admin") return message;
  const paths = [app.repoPath, context.cwd].filter((path) => path.length > 1).sort((a, b) => b.length - a.length);
  return paths.reduce((text, path) => text.replaceAll(path, "<repoPath>"), message);
}

/**
 * Why a deploy of `app` may not start now: the service stops (503), or its deploys are paused and the request
 * did not say `force: true` (409, with the pause's reason and who set it). Undefined when it may.
 */
function refusal(context: AdminContext, app: ResolvedApp, force: boolean): Response | undefined {
  if (context.draining()) return jsonResponse(503, SHUTTING_DOWN, { "retry-after": "30" });
  const paused = pauseOf(context.cwd, app.name);
  if (!paused || force) return undefined;
  const what = app.name === undefined ? "deploys" : `deploys of app "${appName(app)}"`;
  return jsonResponse(409, {
    error: "paused",
    message: `${what} are paused: ${paused.reason} (since ${paused.since}, by ${paused.by}); send {"force": true} to deploy anyway`,
    paused,
  });
}

/**
 * The body of a deploy or a rollback: its one string field (`ref`, `to`) and `force`; or the answer that refuses
 * it (a bad body, the service stopping, a pause).
 */
async function deployBody(
  context: AdminContext,
  app: ResolvedApp,
  request: Request,
  name: string,
  scope: Scope,
  asked: Asked,
): Promise<{ value: string | undefined; force: boolean; skipGate: boolean; noCarry: boolean } | Response> {
  const body = await jsonBody(request);
  if (body instanceof Response) return body;
  const value = field(body, name);
  if (value instanceof Response) return value;
  const force = flag(body, "force");
  if (force instanceof Response) return force;
  const skipGate = flag(body, "skipGate");
  if (skipGate instanceof Response) return skipGate;
  // `carry: false` (with releases.carry): this release is built from nothing; absent or true, it carries as set.
  const carry = body.carry === undefined || body.carry === null ? true : flag(body, "carry");
  if (carry instanceof Response) return carry;
  Object.assign(asked, { target: value, force, skipGate });
  // A deploy token's job (CI) may not override a pause, a freeze or the gate that waits for CI.
  const overrides = (force && scopeRefusal(scope, "force")) || (skipGate && scopeRefusal(scope, "skipGate"));
  if (overrides) return forbidden(context, scope, overrides);
  return refusal(context, app, force) ?? { value, force, skipGate, noCarry: !carry };
}

/**
 * `POST /api/apps/<app>/deploy` `{"ref"?, "force"?, "skipGate"?, "carry"?}`: a pull (no ref), or the commit a ref names (a tag, a branch,
 * a commit, a deploy id: a retry), answered like an acknowledged deploy; 400 for a ref that names nothing, 403
 * for one `deployRefs` does not allow, 409 while paused (unless `force`).
 */
export async function deployAction(
  context: AdminContext,
  app: ResolvedApp,
  request: Request,
  actor: string,
  scope: Scope,
  said: Asked = {},
): Promise<Response> {
  const asked = await deployBody(context, app, request, "ref", scope, said);
  if (asked instanceof Response) return asked;
  const { value: ref, force, skipGate, noCarry } = asked;
  const frozen = force ? undefined : freezeOf({ config: app });
  if (frozen) {
    context.metrics.frozenRefused(appName(app));
    const what = app.name === undefined ? "deploys" : `deploys of app "${appName(app)}"`;
    return jsonResponse(409, {
      error: "frozen",
      message: `${what} are ${frozenText(frozen)}; send {"force": true} to deploy anyway`,
      frozen: { reason: frozen.reason, until: frozen.until, end: frozen.end.toISOString() },
    });
  }
  // A deploy id (a retry) is looked up once, among the deploys the token sees, and passed on as found.
  const named = ref === undefined ? undefined : deployNamed(context, scope, ref);
  if (named instanceof Response) return named;
  let target: RollbackTarget | undefined;
  try {
    // With `tags` and no ref: the highest matching tag on the remote.
    target =
      ref === undefined
        ? await tagsTarget(context.cwd, app, process.env)
        : await deployRefTarget(context.cwd, app, ref, process.env, named);
  } catch (error) {
    if (!(error instanceof DeployRefError)) throw error;
    const message = told(context, scope, app, error.message);
    return error.notAllowed ? apiError(403, "ref not allowed", message) : apiError(400, "unknown ref", message);
  }
  const skip = { ...(skipGate ? { skipGate } : {}), ...(noCarry ? { noCarry } : {}) };
  const sub = scope.sub ? { sub: scope.sub } : {};
  return context.deploy(app, { trigger: "api", actor, ...sub, force, ...skip, ...(target ? { target } : {}) });
}

/**
 * `POST /api/apps/<app>/rollback` `{"to"?, "force"?}`: as `service rollback [<to>]`, answered like an
 * acknowledged deploy; 409 while paused (unless `force`). With releases, `to` may be a kept release's id (the
 * dashboard's "switch back").
 */
export async function rollbackAction(
  context: AdminContext,
  app: ResolvedApp,
  request: Request,
  actor: string,
  scope: Scope,
  said: Asked = {},
): Promise<Response> {
  const asked = await deployBody(context, app, request, "to", scope, said);
  if (asked instanceof Response) return asked;
  const { value: to, force } = asked;
  const named = to === undefined ? undefined : deployNamed(context, scope, to);
  if (named instanceof Response) return named;
  try {
    const target = await rollbackTarget(context.cwd, app, to, app.name, process.env, named);
    return context.deploy(app, { trigger: "rollback", actor, ...(scope.sub ? { sub: scope.sub } : {}), target, force });
  } catch (error) {
    if (error instanceof RollbackTargetError)
      return apiError(409, "no rollback target", told(context, scope, app, error.message));
    throw error;
  }
}

/**
 * `POST /api/deploys/<id>/cancel`: as `service cancel <id>`; answers once the deploy took the cancel. The deploy is
 * looked up once, among those the token sees (queued ones included), and cancelled by the full id found: the scope
 * is checked on the deploy that is cancelled.
 */
export async function cancelAction(context: AdminContext, ref: string, actor: string, scope: Scope): Promise<Response> {
  if (ref === "last" || !isDeployRef(ref))
    return apiError(400, "bad request", `"${ref.slice(0, 40)}" is not a deploy id: give the id (or its start)`);
  const named = namedDeploy(seenBy(context, scope), ref);
  if (named instanceof Response) return named;
  if (!named) return noDeploy(ref);
  const refused = scopeRefusal(scope, "cancel", named.app);
  if (refused) return forbidden(context, scope, refused);
  try {
    const outcome = await cancelDeploy(context.cwd, named.id, cancelledBy(actor));
    return jsonResponse(200, outcome);
  } catch (error) {
    const message = (error as Error).message;
    // It went between the lookup and the cancel: gone from the history and the queue.
    if (/^no deploy/.test(message)) return noDeploy(ref);
    return apiError(409, "cannot cancel", message);
  }
}

/** `POST /api/apps/<app>/pause` `{"reason"?}`: as `service pause`; single-app mode pauses the service. */
export async function pauseAction(
  context: AdminContext,
  app: ResolvedApp,
  request: Request,
  actor: string,
): Promise<Response> {
  const body = await jsonBody(request);
  if (body instanceof Response) return body;
  const reason = field(body, "reason");
  if (reason instanceof Response) return reason;
  try {
    return jsonResponse(200, { paused: true, ...pause(context.cwd, { app: app.name, reason, by: actor }) });
  } catch (error) {
    return apiError(400, "bad request", (error as Error).message);
  }
}

/** `POST /api/apps/<app>/resume`: as `service resume --app`; `resumed` is false when nothing was paused. */
export function resumeAction(context: AdminContext, app: ResolvedApp, actor: string): Response {
  const lifted = resume(context.cwd, { app: app.name, by: actor });
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
