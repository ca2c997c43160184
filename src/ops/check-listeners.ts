/** What `service check` says about the two listeners: the connection bounds in force, and how clients are told apart. */
import { resolve } from "node:path";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import { ADMIN_TOKEN_FILE, readSecretFile, weakAdminTokenWarning } from "../config/secret.ts";
import { isLoopback } from "../system/address.ts";

type Listeners = Pick<
  ResolvedConfig,
  "hostname" | "adminPort" | "adminHostname" | "adminToken" | "boundConnections" | "trustProxy"
>;

/**
 * `boundConnections` as it is in force, and why: set, it applies to every port; unset, each port is bounded
 * unless it is on loopback, so the admin listener (on its own address) is said apart when it is on.
 */
export function describeBoundConnections(config: Listeners): string {
  if (config.boundConnections !== undefined) return `${config.boundConnections} (every port)`;
  const webhook = isLoopback(config.hostname)
    ? `false (hostname ${config.hostname} is loopback: a proxy in front holds the connections)`
    : `true (hostname ${config.hostname} is not loopback: clients connect directly)`;
  if (config.adminPort === undefined) return webhook;
  const loopback = isLoopback(config.adminHostname);
  const admin = `${!loopback} (adminHostname ${config.adminHostname} is ${loopback ? "" : "not "}loopback)`;
  return `${webhook}; admin listener: ${admin}`;
}

/**
 * What works but is unsafe about the listeners: a port on loopback without `trustProxy` (behind a proxy every
 * client then has the proxy's address, so one client's failures slow them all, and on the admin listener hold
 * back even the right token), and an admin token short enough to guess.
 */
export function listenerWarnings(config: Listeners, cwd: string): string[] {
  const warnings: string[] = [];
  const onLoopback = [
    ...(isLoopback(config.hostname) ? [["the webhook port", config.hostname]] : []),
    ...(config.adminPort !== undefined && isLoopback(config.adminHostname)
      ? [["the admin listener", config.adminHostname]]
      : []),
  ];
  if (onLoopback.length > 0 && !config.trustProxy) {
    const names = onLoopback.map(([name]) => name).join(" and ");
    const addresses = [...new Set(onLoopback.map(([, address]) => address))].join(", ");
    warnings.push(
      `${names} ${onLoopback.length > 1 ? "listen" : "listens"} on loopback (${addresses}) without trustProxy: behind a proxy every client then shares the proxy's address, so one client's failed authentications get every client 429; set trustProxy: true when a proxy on this machine forwards to it`,
    );
  }
  if (config.adminPort !== undefined) {
    const weak = config.adminToken ? weakAdminTokenWarning(config.adminToken) : storedTokenWarning(cwd);
    if (weak) warnings.push(weak);
  }
  return warnings;
}

/** The warning for a short token in `.service/admin.token` (one written by hand); an unreadable file is the start's to refuse. */
function storedTokenWarning(cwd: string): string | undefined {
  const file = resolve(cwd, ADMIN_TOKEN_FILE);
  try {
    const token = readSecretFile(file);
    return token === undefined ? undefined : weakAdminTokenWarning(token, file);
  } catch {
    return undefined;
  }
}
