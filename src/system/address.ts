import { isIP } from "./ip.ts";

/** True for an address only this machine can reach (`127.x.x.x`, `::1`, `localhost`). */
export function isLoopback(hostname: string): boolean {
  const plain = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (plain === "localhost") return true;
  if (isIP(plain) === 4) return plain.startsWith("127.");
  return plain === "::1";
}

/**
 * Whether a port on `hostname` counts its connections and closes the ones past the bounds: as `boundConnections`
 * says, else everywhere but loopback. On loopback only this machine reaches the port, behind a proxy that holds
 * the clients' connections and opens one to the service only to forward a request.
 */
export function boundedPort(hostname: string, boundConnections: boolean | undefined): boolean {
  return boundConnections ?? !isLoopback(hostname);
}
