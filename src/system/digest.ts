/**
 * Hashes, HMACs and random names without `node:crypto` under Bun: Bun's own hasher (`Bun.CryptoHasher`) and the
 * web-standard `crypto.getRandomValues` are native, where loading `node:crypto` evaluates Bun's JavaScript of it and
 * the stream code it shares with `node:net` (about 1 MB of a server's idle memory, 4 MB with `node:net`:
 * docs/performance.md). Under Node.js, `node:crypto` (loaded on first use). Same bytes either way.
 */
import type * as NodeCrypto from "node:crypto";

export type HmacAlgorithm = "sha256" | "sha1";

type Hasher = {
  update(data: string | Uint8Array): unknown;
  digest(encoding: "hex"): string;
};

const bunHasher = (globalThis as { Bun?: { CryptoHasher: typeof Bun.CryptoHasher } }).Bun?.CryptoHasher;
let nodeCrypto: typeof NodeCrypto | undefined;
const node = () => (nodeCrypto ??= require("node:crypto") as typeof NodeCrypto);

/** The SHA-256 of `data`, as bytes. */
export function sha256(data: string | Uint8Array): Uint8Array {
  if (bunHasher) return bunHasher.hash("sha256", data) as Uint8Array;
  return node().createHash("sha256").update(data).digest();
}

/** The SHA-256 of `data`, as lowercase hex. */
export function sha256Hex(data: string | Uint8Array): string {
  if (bunHasher) return bunHasher.hash("sha256", data, "hex");
  return node().createHash("sha256").update(data).digest("hex");
}

/** An HMAC of `key` fed chunk by chunk; `digest` answers lowercase hex, once. */
export function hmac(algorithm: HmacAlgorithm, key: string): Hasher {
  if (bunHasher) return new bunHasher(algorithm, key);
  return node().createHmac(algorithm, key);
}

/** Whether two byte strings are equal, in a time that depends only on their length (constant for digests). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** `count` random bytes from the system's generator. */
export function randomBytes(count: number): Buffer {
  const bytes = Buffer.alloc(count);
  crypto.getRandomValues(bytes);
  return bytes;
}

/** `count` random bytes as lowercase hex (names of temporary files, lock sides). */
export const randomHex = (count: number): string => randomBytes(count).toString("hex");
