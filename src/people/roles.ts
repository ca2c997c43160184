/**
 * A person's role, from their groups and the `roles` of the config in force (docs/admin.md "People"): the strongest
 * match wins (admin, then deploy with the apps whose groups match, then read); no match, no role. The scope it
 * gives is checked by the same code as a token's (tokens/scope.ts).
 */
import type { RoleMap } from "../config/people.ts";
import type { Scope } from "../tokens/scope.ts";

/** Someone signed in: by their provider (`oidc`) or named by a trusted proxy (`proxy`). */
export interface Person {
  /** `oidc:alice`, `proxy:alice`: what the records and the scope's refusals name. */
  actor: string;
  /** The provider's subject (OIDC): who the person is, whatever their name. */
  sub?: string;
  /** Their groups as the login (or the proxy's request) gave them. */
  groups: string[];
}

const matches = (wanted: string[], groups: string[]) => wanted.some((group) => group === "*" || groups.includes(group));

/** The scope `roles` gives `person` now; undefined when no entry matches. */
export function scopeOf(person: Person, roles: RoleMap | undefined): Scope | undefined {
  if (!roles) return undefined;
  const sub = person.sub ? { sub: person.sub } : {};
  if (matches(roles.admin, person.groups)) return { name: person.actor, role: "admin", ...sub };
  const apps = Object.entries(roles.deploy)
    .filter(([, groups]) => matches(groups, person.groups))
    .map(([app]) => app);
  if (apps.length > 0) return { name: person.actor, role: "deploy", apps, ...sub };
  if (matches(roles.read, person.groups)) return { name: person.actor, role: "read", ...sub };
  return undefined;
}

/** The refusal of a person no entry of `roles` matches. */
export const noRole = (person: Person) => `signed in as ${person.actor.replace(/^[a-z]+:/, "")}, who has no role here`;

/**
 * What `"*"` opens to any account `where` (the issuer, the proxy): one warning per role it is written in, said at
 * start and by `service check`.
 */
export function openToAnyone(roles: RoleMap, where: string): string[] {
  const out: string[] = [];
  if (roles.admin.includes("*")) out.push(`any account at ${where} may do everything: is sign-up closed?`);
  for (const [app, groups] of Object.entries(roles.deploy))
    if (groups.includes("*")) out.push(`any account at ${where} may deploy ${app}: is sign-up closed?`);
  if (roles.read.includes("*")) out.push(`any account at ${where} may read: is sign-up closed?`);
  return out;
}

/** The apps `roles.deploy` names that the config does not. */
export function unknownApps(roles: RoleMap, apps: string[], where: string): string[] {
  return Object.keys(roles.deploy)
    .filter((app) => !apps.includes(app))
    .map((app) => `${where}.roles.deploy: unknown app ${JSON.stringify(app)} (the apps: ${apps.join(", ")})`);
}
