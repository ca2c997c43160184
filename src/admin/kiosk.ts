/**
 * The wall's kiosk session (docs/admin.md "The wall"): a screen on a wall opens `/wall?kiosk=1` with a `read`
 * token (its Bearer header on that URL, or the form that URL shows), and its session opens only the wall and its
 * live feed. It lasts `adminKioskDays` and ends at the next request after its token's file changes or the token is
 * removed (auth.ts). A deploy or admin token opens none: a screen in a hall must not hold one.
 */
import { jsonResponse } from "../http/json.ts";
import { actorName } from "../tokens/scope.ts";
import type { Opened } from "./auth.ts";
import type { AuditEvent } from "../audit/entry.ts";
import type { FailureThrottle } from "../http/throttle.ts";
import type { AdminAuth } from "./auth.ts";
import { loginPage } from "./pages.ts";
import { wallPage } from "./wall.ts";

export const KIOSK_ONLY = Object.freeze({
  error: "forbidden",
  message: "a kiosk session opens only the wall (/wall) and its live feed (GET /api/apps)",
});

/** What the kiosk needs of the sign-ins (login.ts SignIns) and of the request (login.ts Asked). */
interface SignIns {
  auth: AdminAuth;
  throttle: FailureThrottle;
  audit?: (event: AuditEvent) => void;
}
interface Asked {
  request: Request;
  client: () => string;
  secure: boolean;
}

const READ_ONLY = "A kiosk session opens with a read token only (never a deploy or admin token).";

/** Whether a request of a kiosk session is one it may make: the wall, its live feed, the dashboard's assets. */
export function kioskAllows(method: string, path: string): boolean {
  if (method !== "GET") return false;
  return ["/wall", "/api/apps", "/healthz", "/favicon.ico", "/assets/dashboard.js", "/assets/dashboard.css"].includes(
    path,
  );
}

/** Whether the request asks for a kiosk session (`?kiosk=1`). */
export const asksKiosk = (request: Request) => {
  try {
    return new URL(request.url).searchParams.get("kiosk") === "1";
  } catch {
    return false;
  }
};

/** The login form of the wall's kiosk: a read token, posted to `login?kiosk=1`. */
export const kioskForm = (status = 401, problem = "") => loginPage("./", status, problem, { token: true, kiosk: true });

/**
 * A kiosk session opened by `opened` (a right token: `via` its Bearer header on `/wall?kiosk=1`, or the form), or
 * refused when it is not a `read` token of the config. Audited as a login, `method: kiosk`.
 */
export function openKiosk(ins: SignIns, asked: Asked, opened: Opened, via: "bearer" | "form"): Response {
  const { scope } = opened;
  const file = "file" in scope && typeof scope.file === "string" ? scope.file : undefined;
  const actor = actorName(scope);
  if (scope.role !== "read" || file === undefined) {
    ins.audit?.({
      actor,
      address: asked.client(),
      action: "login refused",
      method: "kiosk",
      outcome: "refused",
      reason: READ_ONLY,
    });
    const wantsHtml = asked.request.headers.get("accept")?.includes("text/html") ?? false;
    return via === "form" || wantsHtml
      ? kioskForm(403, READ_ONLY)
      : jsonResponse(403, { error: "forbidden", message: READ_ONLY });
  }
  ins.audit?.({ actor, address: asked.client(), action: "login ok", method: "kiosk", outcome: "ok" });
  const session = ins.auth.kioskLogin(asked.secure, opened, file);
  if (via === "form")
    return new Response(null, { status: 303, headers: { location: "wall?kiosk=1", "set-cookie": session } });
  const page = wallPage(true);
  page.headers.set("set-cookie", session);
  return page;
}

/**
 * `/wall` in a kiosk session: the kiosk's wall. `/wall?kiosk=1`: a read token's Bearer header opens a kiosk session,
 * any other token is refused; without a token or session, the kiosk's form. Undefined: the wall as any page.
 */
export function kioskWall(ins: SignIns, asked: Asked): Response | undefined {
  const { request } = asked;
  if (ins.auth.kiosk(request)) return wallPage(true);
  if (!asksKiosk(request)) return undefined;
  const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.get("authorization")?.trim() ?? "")?.[1]?.trim();
  if (bearer) {
    const opened = ins.auth.open(bearer);
    if (opened) return openKiosk(ins, asked, opened, "bearer");
    return kioskAgain(ins.throttle.refuse(asked.client()), "Wrong token.");
  }
  if (ins.auth.scope(request)) return undefined;
  const form = kioskForm();
  const clear = ins.auth.clearStale(request, asked.secure);
  if (clear) form.headers.set("set-cookie", clear);
  return form;
}

/** The kiosk's form again after a refused token (429 with `Retry-After` once the client is over budget). */
export function kioskAgain(refusal: Response, problem: string): Response {
  const retry = refusal.headers.get("retry-after");
  if (refusal.status !== 429) return kioskForm(refusal.status, problem);
  const form = kioskForm(429, `Too many wrong tokens: try again in ${retry ?? "a few"} seconds.`);
  if (retry) form.headers.set("retry-after", retry);
  return form;
}
