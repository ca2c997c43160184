import { dirname, resolve } from "node:path";
import { ensurePrivateDir, fileStamp } from "../system/files.ts";
import {
  ADMIN_TOKEN_FILE,
  generateSecret,
  readSecretFile,
  shortSecretError,
  writeSecretFile,
} from "../config/secret.ts";
import { secretsEqual } from "../http/signature.ts";
import type { TokensInForce } from "../tokens/follow.ts";
import type { Person } from "../people/roles.ts";
import { ADMIN_SCOPE, type Scope } from "../tokens/scope.ts";

/** How long a dashboard session lasts after its login, unless `adminSessionHours` says otherwise. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** How long a kiosk session of the wall lasts, unless `adminKioskDays` says otherwise. */
export const KIOSK_TTL_MS = 30 * 86_400_000;

/** Sessions kept at most; a login past it ends the oldest session. */
export const MAX_SESSIONS = 1000;

export const SESSION_COOKIE = "service_session";

export interface EnsuredAdminToken {
  token: string;
  /** True only on the start that created the token file: the one time it is shown. */
  generated: boolean;
  file?: string;
}

/** The admin token: `adminToken` / SERVICE_ADMIN_TOKEN, else `.service/admin.token`, else a new one stored there. */
export function ensureAdminToken(configured: string | undefined, cwd: string): EnsuredAdminToken {
  if (configured !== undefined && configured !== "") {
    const problem = !configured.trim()
      ? "the admin token (SERVICE_ADMIN_TOKEN or adminToken) is blank"
      : shortSecretError(configured, "the admin token (SERVICE_ADMIN_TOKEN or adminToken)");
    if (problem) throw new Error(problem);
    return { token: configured.trim(), generated: false };
  }
  const file = resolve(cwd, ADMIN_TOKEN_FILE);
  const existing = readSecretFile(file);
  if (existing) return { token: existing, generated: false, file };
  ensurePrivateDir(dirname(file));
  const token = generateSecret();
  writeSecretFile(file, token);
  return { token, generated: true, file };
}

/** The value of one cookie of the request. */
export function cookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

/**
 * A state-changing request sent by a page of another site: the browser attaches the session cookie to it all
 * the same, so the cookie alone proves nothing. `Sec-Fetch-Site` where the browser sends it, else `Origin`
 * against the host the request was sent to. A client that is no browser sends neither and is not refused.
 */
export function crossSite(request: Request, trustProxy: boolean): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return true;
  const origin = request.headers.get("origin");
  if (origin === null) return false;
  let host: string;
  try {
    host = new URL(origin).host.toLowerCase();
  } catch {
    return true; // `Origin: null` (a sandboxed frame, a file: page) is no site of ours
  }
  const target = trustProxy ? request.headers.get("x-forwarded-host")?.split(",")[0]?.trim() : undefined;
  return host !== (target || request.headers.get("host") || "").toLowerCase();
}

function clearedCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? "; Secure" : ""}`;
}

/**
 * A session: when it ends, and either the token that opened it (its name and value then) with the label given at
 * login, or the person who signed in (their role is looked up again at each request). A kiosk session (the wall's)
 * holds its token file's stamp then: it ends once the file changes at all.
 */
type Session = { expires: number } & (
  | { label?: string; scope: Scope; value: string; kiosk?: { file: string; stamp: string | undefined } }
  | { person: Person }
);

/** What a person's groups give them now (the config's roles in force); undefined: no role. */
export type PersonScope = (person: Person) => Scope | undefined;

/** A credential that opened a scope: the scope and the value it was opened with. */
export interface Opened {
  scope: Scope;
  value: string;
}

/** The admin token, the scoped tokens (`tokens`), and the sessions of logged-in browsers. */
export class AdminAuth {
  /** Session id → its session; insertion order = oldest login first. */
  private readonly sessions = new Map<string, Session>();
  private readonly currentToken: () => string;
  private lastToken: string | undefined;

  /** `token` as a function: the token may be replaced while the listener runs (`service admin-token rotate`). */
  constructor(
    token: string | (() => string),
    private readonly tokens?: TokensInForce,
    private readonly personScope: PersonScope = () => undefined,
    private readonly ttlMs = SESSION_TTL_MS,
    private readonly kioskMs = KIOSK_TTL_MS,
  ) {
    this.currentToken = typeof token === "string" ? () => token : token;
  }

  /** The token in force. A new one ends every session: a token is replaced because the old one may be known. */
  private tokenNow(): string {
    const token = this.currentToken();
    if (this.lastToken !== undefined && token !== this.lastToken) this.sessions.clear();
    this.lastToken = token;
    return token;
  }

  /**
   * The scope `given` opens: the admin token's, a scoped token's (its value now, from its file), or none. Every
   * value is compared, in constant time, whichever matches: the time taken says nothing of which one did.
   */
  open(given: string): Opened | undefined {
    const admin = this.tokenNow();
    const trimmed = given.trim();
    if (trimmed === "") return undefined;
    let found: Opened | undefined = secretsEqual(trimmed, admin) ? { scope: ADMIN_SCOPE, value: admin } : undefined;
    for (const { spec, value } of this.tokens?.current() ?? []) {
      if (value !== undefined && secretsEqual(trimmed, value) && !found) found = { scope: spec, value };
    }
    return found;
  }

  tokenMatches(given: string): boolean {
    return this.open(given) !== undefined;
  }

  /** The Bearer token of the request: "" when absent. */
  private bearer(request: Request): string {
    const match = /^Bearer\s+(.+)$/i.exec(request.headers.get("authorization")?.trim() ?? "");
    return match?.[1]?.trim() ?? "";
  }

  /** True when the request carries credentials at all (a wrong one is a failure to count). */
  presented(request: Request): boolean {
    return this.bearer(request) !== "" || cookie(request, SESSION_COOKIE) !== undefined;
  }

  /** The scope of the right Bearer token, or of a live session cookie; undefined for neither. */
  scope(request: Request, now = Date.now()): Scope | undefined {
    // First: a replaced token ends the sessions before one is looked at.
    this.tokenNow();
    const bearer = this.bearer(request);
    if (bearer) return this.open(bearer)?.scope;
    const session = this.session(request, now);
    if (session === undefined) return undefined;
    return "person" in session ? this.personScope(session.person) : session.scope;
  }

  /** The right Bearer token, or a live session cookie. */
  authorized(request: Request, now = Date.now()): boolean {
    return this.scope(request, now) !== undefined;
  }

  /** The value the token that opened a session has now; undefined once it is revoked. */
  private valueNow(scope: Scope): string | undefined {
    if (scope === ADMIN_SCOPE) return this.tokenNow();
    return this.tokens?.current().find(({ spec }) => spec === scope)?.value;
  }

  private session(request: Request, now: number): Session | undefined {
    const id = cookie(request, SESSION_COOKIE);
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (session === undefined) return undefined;
    // A session lasts as long as the token it was opened with: revoked or rotated, the session ends. A person's
    // ends when the roles in force give them none.
    const ended =
      "person" in session
        ? this.personScope(session.person) === undefined
        : !secretsEqual(session.value, this.valueNow(session.scope) ?? "") ||
          (session.kiosk !== undefined && fileStamp(session.kiosk.file) !== session.kiosk.stamp);
    if (session.expires <= now || ended) {
      this.sessions.delete(id);
      return undefined;
    }
    return session;
  }

  /** The label the request's live session was given at login (who is at the dashboard), if any. */
  label(request: Request, now = Date.now()): string | undefined {
    const session = this.bearer(request) ? undefined : this.session(request, now);
    return session && "label" in session ? session.label : undefined;
  }

  /** Whether the request's live session is a kiosk session of the wall (a Bearer token makes it none). */
  kiosk(request: Request, now = Date.now()): boolean {
    const session = this.bearer(request) ? undefined : this.session(request, now);
    return !!session && "kiosk" in session && session.kiosk !== undefined;
  }

  /**
   * A kiosk session of the wall, opened by a `read` token (`opened`, whose scope is a token of the config with its
   * file); its `Set-Cookie` value. It lasts `adminKioskDays`, and ends once the token's file changes or it is removed.
   */
  kioskLogin(secure: boolean, opened: Opened, file: string, now = Date.now()): string {
    const kiosk = { file, stamp: fileStamp(file) };
    return this.newSession(secure, now, { ...opened, kiosk }, this.kioskMs);
  }

  /** The person signed in at the request's session, if any. */
  person(request: Request, now = Date.now()): Person | undefined {
    const session = this.bearer(request) ? undefined : this.session(request, now);
    return session && "person" in session ? session.person : undefined;
  }

  /**
   * A new session, with the label its user gave (cleaned by the caller), opened by `opened` (the admin token
   * unless told); its `Set-Cookie` value.
   */
  login(secure: boolean, now = Date.now(), label?: string, opened?: Opened): string {
    const by = opened ?? { scope: ADMIN_SCOPE, value: this.tokenNow() };
    return this.newSession(secure, now, { ...(label ? { label } : {}), ...by });
  }

  /** A new session of a person who signed in; its `Set-Cookie` value. */
  loginPerson(secure: boolean, person: Person, now = Date.now()): string {
    return this.newSession(secure, now, { person });
  }

  private newSession(secure: boolean, now: number, session: Omit<Session, "expires">, ttlMs = this.ttlMs): string {
    for (const [id, held] of this.sessions) if (held.expires <= now) this.sessions.delete(id);
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const id = generateSecret();
    this.sessions.set(id, { expires: now + ttlMs, ...session } as Session);
    const seconds = Math.floor(ttlMs / 1000);
    return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${seconds}${secure ? "; Secure" : ""}`;
  }

  /** Ends every session of `actor` (a person's, `oidc:alice`); how many there were. */
  endSessions(actor: string): number {
    let ended = 0;
    for (const [id, session] of this.sessions)
      if ("person" in session && session.person.actor === actor) {
        this.sessions.delete(id);
        ended++;
      }
    return ended;
  }

  /** Ends the request's session; the `Set-Cookie` value that clears it. */
  logout(request: Request, secure: boolean): string {
    const id = cookie(request, SESSION_COOKIE);
    if (id) this.sessions.delete(id);
    return clearedCookie(secure);
  }

  /** The `Set-Cookie` value that clears the request's session cookie when it names no live session. */
  clearStale(request: Request, secure: boolean, now = Date.now()): string | undefined {
    const present = cookie(request, SESSION_COOKIE) !== undefined;
    return present && this.session(request, now) === undefined ? clearedCookie(secure) : undefined;
  }

  get sessionCount(): number {
    return this.sessions.size;
  }
}
