/**
 * What the holder of a token may do on the admin listener (docs/admin.md "Tokens"): `read` every GET, `deploy` also
 * deploy, deploy again, roll back and cancel (never pause, resume, force or skip the gate), `admin` everything;
 * with `apps`, only those apps are seen and acted on. The admin token is an admin scope named `admin`.
 */

export const ROLES = ["read", "deploy", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** Who a request is, once its token or session is known. */
export interface Scope {
  /** The token's name; `admin` for the admin token; a person's actor (`oidc:alice`: no token's name has a ":"). */
  name: string;
  role: Role;
  /** Only these apps; undefined: every app. */
  apps?: string[];
  /** A person signed in with an OpenID provider: the provider's subject, kept in records and the audit. */
  sub?: string;
}

/** The admin token's scope: everything. */
export const ADMIN_SCOPE: Scope = Object.freeze({ name: "admin", role: "admin" });

/** What a request asks to do, beyond reading. */
export type Action = "deploy" | "rollback" | "cancel" | "pause" | "resume" | "force" | "skipGate";

/** The actions of a `deploy` token; `force` and `skipGate` stay an admin's (a CI job must not override its own gate). */
const DEPLOY_ACTIONS: ReadonlySet<Action> = new Set(["deploy", "rollback", "cancel"]);

/** A person's scope (`oidc:alice`, `proxy:bob`), not a token's. */
export const isPerson = (scope: Scope) => scope.name.includes(":");

/** Whether `scope` sees `app` (its records, logs, status). */
export function sees(scope: Scope, app: string): boolean {
  return scope.apps === undefined || scope.apps.includes(app);
}

/** `token ci-web (deploy: web)`, `token grafana (read)`: how a refusal names the token, never its value. */
export function scopeText(scope: Scope): string {
  return `${isPerson(scope) ? "" : "token "}${scope.name} (${scope.role}${scope.apps ? `: ${scope.apps.join(", ")}` : ""})`;
}

/** Why `scope` may not do `action` (on `app`), as the 403's message; undefined when it may. */
export function refusal(scope: Scope, action: Action, app?: string): string | undefined {
  if (scope.role === "admin" && (app === undefined || sees(scope, app))) return undefined;
  const what =
    { force: 'deploy with "force": true', skipGate: 'deploy with "skipGate": true' }[action as string] ?? action;
  if (scope.role === "read" || !DEPLOY_ACTIONS.has(action)) return `${scopeText(scope)} may not ${what}`;
  if (app !== undefined && !sees(scope, app)) return `${scopeText(scope)} may not ${what} app "${app}"`;
  return undefined;
}

/** The actor of what the scope does, before `@<address>`: `admin`, `admin:alice`, `token:ci-web`, `token:ci-web:alice`. */
export function actorName(scope: Scope, label?: string): string {
  // "admin" is no token's name (list.ts refuses it): it is the admin token's.
  const who = scope.name === ADMIN_SCOPE.name || isPerson(scope) ? scope.name : `token:${scope.name}`;
  return label ? `${who}:${label}` : who;
}
