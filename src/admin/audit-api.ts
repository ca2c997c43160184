/** `GET /api/audit` (docs/audit.md): the audit trail's newest lines, filtered; for the admin role over every app only. */
import { readAudit } from "../audit/read.ts";
import { auditDir } from "../audit/trail.ts";
import { parseSince } from "../history/filter.ts";
import { jsonResponse } from "../http/json.ts";
import { type Scope, scopeText } from "../tokens/scope.ts";
import { type AdminContext, apiError, forbidden, queryLimit } from "./api.ts";

/** Lines an answer holds at most. */
export const MAX_AUDIT_LINES = 5000;

/** Whether `scope` may read the trail: it names every app and every actor, so the admin role over every app only. */
export const mayAudit = (scope: Scope | undefined) => scope?.role === "admin" && !scope.apps;

/** `?since=2d&actor=token:ci-web&app=web&limit=200` (limit 500 unless told). */
export function auditAnswer(context: AdminContext, scope: Scope, query: URLSearchParams): Response {
  if (!mayAudit(scope))
    return forbidden(
      context,
      scope,
      `${scopeText(scope)} may not read the audit trail (the admin role over every app may)`,
    );
  const limit = queryLimit(query, 500, MAX_AUDIT_LINES);
  if (limit instanceof Response) return limit;
  let since: number | undefined;
  try {
    const text = query.get("since");
    since = text ? parseSince(text) : undefined;
  } catch (error) {
    return apiError(400, "bad request", `since ${(error as Error).message}`);
  }
  const actor = query.get("actor") || undefined;
  const app = query.get("app") || undefined;
  const lines = readAudit(auditDir(context.cwd), {
    ...(since !== undefined ? { since } : {}),
    ...(actor ? { actor } : {}),
    ...(app ? { app } : {}),
    limit,
  });
  return jsonResponse(200, lines);
}
