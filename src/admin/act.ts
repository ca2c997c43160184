/**
 * The admin API's actions on an app or a deploy, checked by the token's scope, answered, and written to the audit
 * trail (docs/audit.md): the one way the API and the MCP endpoint's tools act.
 */
import type { AuditAction, AuditEvent } from "../audit/entry.ts";
import { splitActor } from "../audit/entry.ts";
import { type Action, refusal, type Scope, sees } from "../tokens/scope.ts";
import { type Asked, cancelAction, deployAction, pauseAction, resumeAction, rollbackAction } from "./actions.ts";
import { type AdminContext, apiError, appName, forbidden } from "./api.ts";

/** The actions on an app (`POST /api/apps/<app>/<action>`). */
export const APP_ACTIONS = ["deploy", "rollback", "pause", "resume"] as const;
export type AppAction = (typeof APP_ACTIONS)[number];

const AUDITED: Record<AppAction | "cancel", AuditAction> = {
  deploy: "deploy asked",
  rollback: "rollback",
  pause: "pause",
  resume: "resume",
  cancel: "cancel",
};

/** How an answer ended, for the audit: ok, refused (4xx, with its error's name) or failed (5xx); the deploy it queued. */
export async function outcomeOf(answer: Response): Promise<Pick<AuditEvent, "outcome" | "reason" | "deploy">> {
  let body: { error?: unknown; id?: unknown } | undefined;
  try {
    body = (await answer.clone().json()) as typeof body;
  } catch {}
  if (answer.status < 300) return { outcome: "ok", ...(typeof body?.id === "string" ? { deploy: body.id } : {}) };
  const reason = typeof body?.error === "string" ? body.error : `HTTP ${answer.status}`;
  return { outcome: answer.status >= 500 ? "failed" : "refused", reason };
}

/** The context as `scope` sees it: its apps only, when it is scoped to apps. */
export function seenBy<T extends AdminContext>(context: T, scope: Scope): T {
  if (!scope.apps) return context;
  return {
    ...context,
    apps: () => context.apps().filter((app) => sees(scope, appName(app))),
    visible: (app: string) => sees(scope, app),
  };
}

/** Who acts and how the action came, for the audit. */
export interface Acting {
  scope: Scope;
  /** `token:ci-web@10.0.0.5`. */
  actor: string;
  /** `mcp` for an agent's tool call; unset for the API. */
  via?: string;
}

/** Writes the audit line of an action once it is answered. */
async function audited(
  context: AdminContext,
  acting: Acting,
  what: Pick<AuditEvent, "app" | "target" | "deploy"> & { action: AuditAction; asked?: Asked },
  answer: Response,
): Promise<Response> {
  if (!context.audit) return answer;
  const { asked, ...rest } = what;
  context.audit({
    ...splitActor(acting.actor),
    ...(acting.scope.sub ? { sub: acting.scope.sub } : {}),
    ...rest,
    ...(asked?.target ? { target: asked.target } : {}),
    ...(asked?.force ? { force: true } : {}),
    ...(asked?.skipGate ? { skipGate: true } : {}),
    ...(acting.via ? { via: acting.via } : {}),
    ...(await outcomeOf(answer)),
  });
  return answer;
}

/**
 * `POST /api/apps/<app>/<action>`: an unknown app is not found (not audited: nothing was acted on), a role that may
 * not is refused; else the action's answer.
 */
export async function appAction(
  context: AdminContext,
  acting: Acting,
  name: string,
  action: AppAction,
  request: Request,
): Promise<Response> {
  const app = context.apps().find((a) => appName(a) === name);
  if (!app) return apiError(404, "not found", `no app named ${JSON.stringify(name.slice(0, 100))}`);
  const { scope, actor } = acting;
  const asked: Asked = {};
  const what = { action: AUDITED[action], app: appName(app), asked };
  const refused = refusal(scope, action as Action, appName(app));
  if (refused) return audited(context, acting, what, forbidden(context, scope, refused));
  const answer = await {
    deploy: () => deployAction(context, app, request, actor, scope, asked),
    rollback: () => rollbackAction(context, app, request, actor, scope, asked),
    pause: () => pauseAction(context, app, request, actor),
    resume: async () => resumeAction(context, app, actor),
  }[action]();
  return audited(context, acting, what, answer);
}

/** `POST /api/deploys/<id>/cancel`, seen as the token sees the deploys. */
export async function cancelAudited(context: AdminContext, acting: Acting, id: string): Promise<Response> {
  const answer = await cancelAction(context, id, acting.actor, acting.scope);
  return audited(context, acting, { action: "cancel", deploy: id }, answer);
}
