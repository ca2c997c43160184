import { isIP } from "node:net";

/** True for an address only this machine can reach: there the admin listener's /metrics needs no token. */
export function isLoopback(hostname: string): boolean {
  const plain = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (plain === "localhost") return true;
  if (isIP(plain) === 4) return plain.startsWith("127.");
  return plain === "::1";
}
