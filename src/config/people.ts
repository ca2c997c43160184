/**
 * The keys that let people in (docs/admin.md "People"): `adminOidc`, a sign-in with the team's OpenID provider, and
 * `adminTrustedHeader`, the user a trusted proxy names. Both map groups to a role the same way (`roles`). Their
 * types and the checks of what is written; what needs the apps or the files is people/check.ts.
 */
import type { BlockList as NetBlockList } from "node:net";
import { isIP } from "../system/ip.ts";
import { isLoopback } from "../system/address.ts";

/** Groups → role: the strongest match wins (admin, then deploy, then read). `"*"` matches anyone. */
export interface RoleMap {
  /** The claim (OIDC) that lists the user's groups. @default "groups" */
  claim: string;
  admin: string[];
  /** App → the groups that may deploy it. */
  deploy: Record<string, string[]>;
  read: string[];
}

export interface OidcSettings {
  /** The issuer's URL; its discovery is at `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  /** The client secret's file: its first line, mode 0600. */
  clientSecretFile: string;
  /** "Sign in with <name>". @default the issuer's host */
  name: string;
  roles: RoleMap;
}

export interface TrustedHeaderSettings {
  /** The header naming the user (`Remote-User`). */
  header: string;
  /** The header listing the user's groups, comma-separated (`Remote-Groups`). @default none */
  groupsHeader?: string;
  /** The addresses (CIDRs) a request must come from; no default. */
  from: string[];
  /** The secret the proxy sends as `X-Service-Proxy-Secret`: the file's first line, mode 0600. */
  secretFile: string;
  roles: RoleMap;
}

/** The header the proxy proves itself with. */
export const PROXY_SECRET_HEADER = "x-service-proxy-secret";

const isMapping = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

/** Known fields only, each problem on its own line. */
function known(value: Record<string, unknown>, fields: string[], where: string, problems: string[]): void {
  for (const key of Object.keys(value))
    if (!fields.includes(key)) problems.push(`${where}: unknown key "${key}" (allowed: ${fields.join(", ")})`);
}

function groupList(value: unknown, where: string, problems: string[]): string[] {
  if (value === undefined) return [];
  const items = typeof value === "string" ? [value] : value;
  if (!Array.isArray(items) || !items.every((item) => typeof item === "string" && item.trim() !== "")) {
    problems.push(`${where}: expected a list of group names (or "*": anyone)`);
    return [];
  }
  return items.map((item: string) => item.trim());
}

/** `roles: {claim, admin, deploy: {app: [...]}, read}`; at least one role given. */
export function normalizeRoles(value: unknown, where: string, problems: string[]): RoleMap {
  const roles: RoleMap = { claim: "groups", admin: [], deploy: {}, read: [] };
  if (!isMapping(value)) {
    problems.push(`${where}: expected a mapping { claim?, admin?, deploy?: { <app>: [groups] }, read? }`);
    return roles;
  }
  known(value, ["claim", "admin", "deploy", "read"], where, problems);
  if (value.claim !== undefined) {
    if (typeof value.claim === "string" && value.claim.trim()) roles.claim = value.claim.trim();
    else problems.push(`${where}.claim: expected the name of a claim (like groups)`);
  }
  roles.admin = groupList(value.admin, `${where}.admin`, problems);
  roles.read = groupList(value.read, `${where}.read`, problems);
  if (value.deploy !== undefined) {
    if (!isMapping(value.deploy)) problems.push(`${where}.deploy: expected a mapping of app names to lists of groups`);
    else
      for (const [app, groups] of Object.entries(value.deploy))
        roles.deploy[app] = groupList(groups, `${where}.deploy.${app}`, problems);
  }
  if (roles.admin.length + roles.read.length + Object.keys(roles.deploy).length === 0)
    problems.push(`${where}: give at least one of admin, deploy, read (no one has a role by default)`);
  return roles;
}

function requiredText(value: Record<string, unknown>, key: string, where: string, problems: string[]): string {
  const text = value[key];
  if (typeof text === "string" && text.trim()) return text.trim();
  problems.push(`${where}.${key}: required`);
  return "";
}

/** `adminOidc`: an https issuer (http only on a loopback address), a client, its secret's file, the roles. */
export function normalizeOidc(value: unknown, where: string, problems: string[]): OidcSettings | undefined {
  if (!isMapping(value)) {
    problems.push(`${where}: expected a mapping { issuer, clientId, clientSecretFile, name?, roles }`);
    return undefined;
  }
  known(value, ["issuer", "clientId", "clientSecretFile", "name", "roles"], where, problems);
  const issuer = requiredText(value, "issuer", where, problems);
  const url = issuer && URL.canParse(issuer) ? new URL(issuer) : undefined;
  if (issuer && (!url || (url.protocol !== "https:" && url.protocol !== "http:")))
    problems.push(`${where}.issuer: expected an https:// URL, got ${JSON.stringify(issuer)}`);
  else if (url?.protocol === "http:" && !isLoopback(url.hostname))
    problems.push(
      `${where}.issuer: http:// is accepted only on a loopback address (127.0.0.1, ::1, localhost); use https://`,
    );
  const name = value.name === undefined ? (url?.host ?? "") : value.name;
  if (typeof name !== "string" || !name.trim() || name.length > 60)
    problems.push(`${where}.name: expected the provider's name, at most 60 characters`);
  return {
    issuer,
    clientId: requiredText(value, "clientId", where, problems),
    clientSecretFile: requiredText(value, "clientSecretFile", where, problems),
    name: typeof name === "string" ? name.trim() : "",
    roles: normalizeRoles(value.roles, `${where}.roles`, problems),
  };
}

/** `adminTrustedHeader`: the user's header, the groups', the addresses it comes from, the proxy's secret, the roles. */
export function normalizeTrustedHeader(
  value: unknown,
  where: string,
  problems: string[],
): TrustedHeaderSettings | undefined {
  if (!isMapping(value)) {
    problems.push(`${where}: expected a mapping { header, groupsHeader?, from, secretFile, roles }`);
    return undefined;
  }
  known(value, ["header", "groupsHeader", "from", "secretFile", "roles"], where, problems);
  const header = requiredText(value, "header", where, problems);
  if (header && !HEADER_NAME.test(header)) problems.push(`${where}.header: not a header name`);
  const groupsHeader = value.groupsHeader;
  if (groupsHeader !== undefined && (typeof groupsHeader !== "string" || !HEADER_NAME.test(groupsHeader)))
    problems.push(`${where}.groupsHeader: not a header name`);
  const from = groupList(value.from, `${where}.from`, problems);
  if (value.from === undefined)
    problems.push(`${where}.from: required: the proxy's addresses (like [127.0.0.1/32]); there is no default`);
  for (const cidr of from)
    if (!parseCidr(cidr))
      problems.push(`${where}.from: ${JSON.stringify(cidr)} is not an address or a CIDR (like 127.0.0.1/32, ::1/128)`);
  return {
    header,
    ...(typeof groupsHeader === "string" ? { groupsHeader } : {}),
    from,
    secretFile: requiredText(value, "secretFile", where, problems),
    roles: normalizeRoles(value.roles, `${where}.roles`, problems),
  };
}

/** `10.0.0.0/8`, `::1/128`, or an address alone (the whole address). */
function parseCidr(text: string): { address: string; prefix: number; family: "ipv4" | "ipv6" } | undefined {
  const [address = "", bits, extra] = text.split("/");
  const version = isIP(address);
  if (!version || extra !== undefined) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (!(prefix >= 0 && prefix <= max)) return undefined;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/** Whether `address` (a peer's, `::ffff:` forms included) is in one of `cidrs`. */
export function inCidrs(address: string, cidrs: string[]): boolean {
  // node:net only here, for the people a trusted proxy names (adminTrustedHeader): a server without them never loads it.
  const { BlockList } = require("node:net") as { BlockList: typeof NetBlockList };
  const list = new BlockList();
  for (const cidr of cidrs) {
    const parsed = parseCidr(cidr);
    if (parsed) list.addSubnet(parsed.address, parsed.prefix, parsed.family);
  }
  const plain = address.replace(/^\[|\]$/g, "");
  const version = isIP(plain);
  return version !== 0 && list.check(plain, version === 4 ? "ipv4" : "ipv6");
}
