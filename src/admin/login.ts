/**
 * Signing in and out of the dashboard: the token form (`POST /login`), the provider's sign-in (`GET /oidc/login`,
 * `/oidc/callback`, with `adminOidc`), `POST /logout`, and the admin's end of a person's sessions. A login that
 * succeeds (`signedIn`), one refused (`refused`; a forged proxy's header: `forgedHeader`), a logout (`loggedOut`)
 * and ended sessions (`endSessions`) each happen in one function below.
 */
import type { Logger } from "../system/logger.ts";
import { readBody } from "../http/body.ts";
import { jsonResponse } from "../http/json.ts";
import type { FailureThrottle } from "../http/throttle.ts";
import type { OidcLogin } from "../people/oidc.ts";
import { noRole, type Person } from "../people/roles.ts";
import type { AuditEvent } from "../audit/entry.ts";
import { actorName } from "../tokens/scope.ts";
import { oneLine } from "../system/actor.ts";
import type { Opened } from "./auth.ts";
import { type AdminAuth, type PersonScope, cookie } from "./auth.ts";
import { asksKiosk, kioskAgain, openKiosk } from "./kiosk.ts";
import { type LoginChoices, loginPage, signedInPage } from "./pages.ts";

/** Largest body of the login form. */
const MAX_LOGIN_BODY_BYTES = 4096;
/** Longest label a dashboard login may give itself (the name shown in the history). */
const MAX_LABEL_CHARS = 40;
const UNAUTHORIZED = Object.freeze({
  error: "unauthorized",
  message: "missing or wrong admin token: send Authorization: Bearer <admin token>, or log in",
});

export interface SignIns {
  auth: AdminAuth;
  throttle: FailureThrottle;
  logger: Logger;
  /** `adminTokenLogin` in force. */
  tokenLogin: () => boolean;
  /** With `adminOidc`: the provider's sign-in, and the callback's URL (`<adminPublicUrl>/oidc/callback`). */
  oidc?: { login: OidcLogin; redirectUri: string; cookie: string };
  personScope: PersonScope;
  /** Writes a line of the audit trail (docs/audit.md): each sign-in, refusal, logout and ended session. */
  audit?: (event: AuditEvent) => void;
}

/** The request as the listener has looked at it. */
export interface Asked {
  request: Request;
  path: string;
  client: () => string;
  secure: boolean;
  /** The 429 while the client is over its failure budget. */
  throttled: (presented?: boolean) => Response | undefined;
}

/** What the login page offers now. */
export const choicesOf = (ins: SignIns): LoginChoices => ({
  token: ins.tokenLogin(),
  ...(ins.oidc ? { oidc: ins.oidc.login.name } : {}),
});

const wantsHtml = (request: Request) => request.headers.get("accept")?.includes("text/html") ?? false;

/** The answer to a sign-in route, or undefined for any other request. */
export async function signInRoute(ins: SignIns, asked: Asked): Promise<Response | undefined> {
  const { request, path } = asked;
  const method = request.method;
  if (path === "/login" && method === "POST") return tokenLogin(ins, asked);
  if (path === "/logout" && method === "POST") return loggedOut(ins, asked);
  if (!ins.oidc || method !== "GET") return undefined;
  if (path === "/oidc/login") return oidcBegin(ins, asked);
  if (path === "/oidc/callback") return oidcCallback(ins, asked);
  return undefined;
}

/** `POST /login`: the token form. */
async function tokenLogin(ins: SignIns, asked: Asked): Promise<Response> {
  const { request } = asked;
  const blocked = asked.throttled(true);
  if (blocked) return wantsHtml(request) ? loginAgain("./", blocked, "", choicesOf(ins)) : blocked;
  if (!ins.tokenLogin())
    return refused(
      ins,
      asked,
      "token",
      "./",
      jsonResponse(403, { error: "forbidden", message: TOKEN_LOGIN_OFF }),
      TOKEN_LOGIN_OFF,
    );
  // Within the size limit and the read deadline every body has: a login form is not authenticated yet.
  const read = await readBody(request, { limit: MAX_LOGIN_BODY_BYTES, keep: true });
  if (!read.ok)
    return jsonResponse(read.reason === "too large" ? 413 : 408, {
      error: read.reason,
      message: `the login form could not be read (${read.reason}; at most ${MAX_LOGIN_BODY_BYTES} bytes)`,
    });
  read.release();
  const form = new URLSearchParams(Buffer.from(read.body ?? new Uint8Array()).toString("utf8"));
  const token = form.get("token") ?? "";
  const opened = ins.auth.open(token);
  const kiosk = asksKiosk(request);
  if (!opened) {
    const answer = token ? ins.throttle.refuse(asked.client()) : jsonResponse(401, UNAUTHORIZED);
    if (kiosk) return refused(ins, asked, "kiosk", "./", answer, "Wrong token.");
    return refused(ins, asked, "token", "./", answer, "Wrong admin token.");
  }
  // `POST /login?kiosk=1`, the wall's form: a kiosk session, for a read token only.
  if (kiosk) return openKiosk(ins, asked, opened, "form");
  // The name given at login labels what this session does in the history: `admin:alice@<address>`.
  const label = oneLine(form.get("label"), MAX_LABEL_CHARS)?.replace(/@/g, "-");
  return signedIn(ins, asked, { opened, ...(label ? { label } : {}) });
}

const TOKEN_LOGIN_OFF = "The token login is off here (adminTokenLogin: false).";

/** `GET /oidc/login`: off to the provider, the sign-in's `state` in a cookie that comes back with the browser. */
async function oidcBegin(ins: SignIns, asked: Asked): Promise<Response> {
  const oidc = ins.oidc!;
  try {
    const { location, state } = await oidc.login.begin(oidc.redirectUri);
    // Lax, not Strict: the browser comes back from the provider's site, and must bring it.
    const cookie = `${oidc.cookie}=${state}; Path=/; HttpOnly; SameSite=Lax; Max-Age=600${asked.secure ? "; Secure" : ""}`;
    return new Response(null, {
      status: 303,
      headers: { location, "set-cookie": cookie, "cache-control": "no-store" },
    });
  } catch (error) {
    ins.logger.warn(`sign-in with ${oidc.login.name}: ${(error as Error).message}`);
    return loginPage("../", 502, (error as Error).message, choicesOf(ins));
  }
}

/** `GET /oidc/callback`: the provider's answer, checked; a session for a person with a role. */
async function oidcCallback(ins: SignIns, asked: Asked): Promise<Response> {
  const oidc = ins.oidc!;
  const blocked = asked.throttled(true);
  if (blocked) return loginAgain("../", blocked, "", choicesOf(ins));
  const url = new URL(asked.request.url);
  let person: Person;
  try {
    person = await oidc.login.finish(url.searchParams, cookie(asked.request, oidc.cookie), oidc.redirectUri);
  } catch (error) {
    const message = (error as Error).message;
    ins.logger.warn(`sign-in with ${oidc.login.name} refused: ${message}`);
    return refused(ins, asked, "oidc", "../", ins.throttle.refuse(asked.client()), `Not signed in: ${message}.`);
  }
  if (!ins.personScope(person)) {
    const answer = jsonResponse(403, { error: "forbidden", message: noRole(person) });
    return refused(ins, asked, "oidc", "../", answer, `${capital(noRole(person))}.`, person);
  }
  return signedIn(ins, asked, { person });
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** A login that succeeded (the token form's, or a person's at the provider): its session. */
function signedIn(ins: SignIns, asked: Asked, by: { opened: Opened; label?: string } | { person: Person }): Response {
  ins.audit?.({
    ...("person" in by
      ? { actor: by.person.actor, ...(by.person.sub ? { sub: by.person.sub } : {}), method: "oidc" }
      : { actor: actorName(by.opened.scope, by.label), method: "token" }),
    address: asked.client(),
    action: "login ok",
    outcome: "ok",
  });
  if ("person" in by) {
    const headers = new Headers({ "cache-control": "no-store" });
    headers.append("set-cookie", ins.auth.loginPerson(asked.secure, by.person));
    headers.append("set-cookie", `${ins.oidc!.cookie}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`);
    return signedInPage("../", headers);
  }
  const session = ins.auth.login(asked.secure, Date.now(), by.label, by.opened);
  return new Response(null, { status: 303, headers: { location: "./", "set-cookie": session } });
}

/**
 * A login refused (`method`: the token form or the provider; `person` when they signed in but have no role): the
 * form again saying why for a browser, `answer` (its JSON) for a script.
 */
function refused(
  ins: SignIns,
  asked: Asked,
  method: "token" | "oidc" | "kiosk",
  root: string,
  answer: Response,
  problem: string,
  person?: Person,
): Response {
  if (person) ins.logger.warn(`${person.actor} (sub ${person.sub}) signed in at the provider; no role here: refused`);
  ins.audit?.({
    actor: person?.actor ?? "unknown",
    ...(person?.sub ? { sub: person.sub } : {}),
    address: asked.client(),
    action: "login refused",
    method,
    outcome: "refused",
    reason: problem,
  });
  if (method !== "oidc" && !wantsHtml(asked.request)) return answer;
  return method === "kiosk" ? kioskAgain(answer, problem) : loginAgain(root, answer, problem, choicesOf(ins));
}

const FORGED = Object.freeze({
  error: "unauthorized",
  message: "a user named in a header is believed only from the trusted proxy (its address and its secret)",
});

/** A request naming a user (`adminTrustedHeader`) not from the proxy's address with its secret: counted, refused. */
export function forgedHeader(ins: SignIns, asked: Asked): Response {
  ins.audit?.({
    actor: "unknown",
    address: asked.client(),
    action: "login refused",
    method: "trusted header",
    outcome: "refused",
    reason: "identity headers not from the trusted proxy",
  });
  const answer = asked.throttled(true) ?? ins.throttle.refuse(asked.client());
  return answer.status === 401 ? jsonResponse(401, FORGED) : answer;
}

/** `POST /logout`: the request's session ends. */
function loggedOut(ins: SignIns, asked: Asked): Response {
  const leaving = ins.auth.scope(asked.request);
  if (leaving)
    ins.audit?.({
      actor: actorName(leaving, ins.auth.label(asked.request)),
      address: asked.client(),
      action: "logout",
      outcome: "ok",
    });
  return new Response(null, {
    status: 303,
    headers: { location: "./", "set-cookie": ins.auth.logout(asked.request, asked.secure) },
  });
}

/** `POST /api/sessions/<actor>/end` (admin): every session of that person ends now. */
export function endSessions(ins: SignIns, actor: string, by?: string): Response {
  const ended = ins.auth.endSessions(actor);
  ins.audit?.({ actor: by ?? "admin", action: "session ended", target: actor, outcome: "ok" });
  return jsonResponse(200, { actor, ended });
}

/** The login form again after a refused credential: 401, or 429 with `Retry-After` once the client is over budget. */
export function loginAgain(root: string, refusal: Response, problem: string, choices: LoginChoices): Response {
  const retry = refusal.headers.get("retry-after");
  if (refusal.status !== 429) return loginPage(root, refusal.status, problem, choices);
  const form = loginPage(root, 429, `Too many wrong tokens: try again in ${retry ?? "a few"} seconds.`, choices);
  if (retry) form.headers.set("retry-after", retry);
  return form;
}
