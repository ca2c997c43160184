/**
 * What the start and `service check` say of `adminOidc` and `adminTrustedHeader`: problems that refuse the start
 * (a secret file missing or open to others, an unknown app, no `adminPublicUrl` to come back to), warnings (a
 * role open to any account), and how each is shown (never a secret).
 */
import { resolve } from "node:path";
import type { RoleMap } from "../config/people.ts";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import { readPrivateSecret } from "../tokens/list.ts";
import { openToAnyone, unknownApps } from "./roles.ts";

export interface PeopleCheck {
  problems: string[];
  warnings: string[];
  described: { adminOidc?: string; adminTrustedHeader?: string };
}

type Keys = Pick<ResolvedConfig, "adminOidc" | "adminTrustedHeader" | "adminPublicUrl">;

/** The callback's URL: the dashboard's public address (a proxy's sub-path kept), then `oidc/callback`. */
export const callbackUrl = (adminPublicUrl: string) => `${adminPublicUrl.replace(/\/+$/, "")}/oidc/callback`;

export function checkPeople(config: Keys, apps: string[], cwd: string): PeopleCheck {
  const out: PeopleCheck = { problems: [], warnings: [], described: {} };
  const { adminOidc: oidc, adminTrustedHeader: trusted } = config;
  if (oidc) {
    const file = resolve(cwd, oidc.clientSecretFile);
    const read = readPrivateSecret(file, `adminOidc.clientSecretFile: ${file}`, "a client secret");
    if ("problem" in read) out.problems.push(read.problem);
    if (!config.adminPublicUrl)
      out.problems.push(
        "adminOidc: set adminPublicUrl (like https://deploy.example.com/admin): the provider sends the browser back to <adminPublicUrl>/oidc/callback",
      );
    out.problems.push(...unknownApps(oidc.roles, apps, "adminOidc"));
    out.warnings.push(...openToAnyone(oidc.roles, oidc.issuer));
    const back = config.adminPublicUrl ? `, back to ${callbackUrl(config.adminPublicUrl)}` : "";
    out.described.adminOidc = `${oidc.name} at ${oidc.issuer} (client ${oidc.clientId}${back}; ${rolesText(oidc.roles)})`;
  }
  if (trusted) {
    const file = resolve(cwd, trusted.secretFile);
    const read = readPrivateSecret(file, `adminTrustedHeader.secretFile: ${file}`, "the proxy's secret");
    if ("problem" in read) out.problems.push(read.problem);
    out.problems.push(...unknownApps(trusted.roles, apps, "adminTrustedHeader"));
    out.warnings.push(...openToAnyone(trusted.roles, `the proxy (${trusted.header})`));
    const groups = trusted.groupsHeader ? `, groups in ${trusted.groupsHeader}` : "";
    out.described.adminTrustedHeader = `${trusted.header}${groups} from ${trusted.from.join(", ")} (${rolesText(trusted.roles)})`;
  }
  return out;
}

/** `roles from groups: admin: ops; deploy web: web-team; read: engineering`. */
function rolesText(roles: RoleMap): string {
  const parts = [
    ...(roles.admin.length ? [`admin: ${roles.admin.join(", ")}`] : []),
    ...Object.entries(roles.deploy).map(([app, groups]) => `deploy ${app}: ${groups.join(", ")}`),
    ...(roles.read.length ? [`read: ${roles.read.join(", ")}`] : []),
  ];
  return `roles from ${roles.claim}: ${parts.join("; ")}`;
}
