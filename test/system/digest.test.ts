/**
 * system/digest.ts gives the bytes `node:crypto` gives: SHA-256, HMAC-SHA256 and HMAC-SHA1 fed in chunks, the
 * constant-time comparison, random names.
 */
import { describe, expect, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import { hmac, randomBytes, randomHex, sameBytes, sha256, sha256Hex } from "../../src/system/digest.ts";

describe("system/digest.ts", () => {
  test("SHA-256 and the HMACs are node:crypto's, whole and in chunks", () => {
    const body = new TextEncoder().encode("héllo, wörld ".repeat(1000));
    for (const text of ["", "secret", "héllo"]) {
      expect(Buffer.from(sha256(text)).toString("hex")).toBe(createHash("sha256").update(text).digest("hex"));
      expect(sha256Hex(text)).toBe(createHash("sha256").update(text).digest("hex"));
    }
    for (const algorithm of ["sha256", "sha1"] as const) {
      const h = hmac(algorithm, "the-key");
      for (let i = 0; i < body.length; i += 777) h.update(body.subarray(i, i + 777));
      expect(h.digest("hex")).toBe(createHmac(algorithm, "the-key").update(body).digest("hex"));
    }
  });

  test("sameBytes is equality of bytes; random bytes differ and have the length asked", () => {
    expect(sameBytes(sha256("a"), sha256("a"))).toBe(true);
    expect(sameBytes(sha256("a"), sha256("b"))).toBe(false);
    expect(sameBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2, 3]))).toBe(false);
    expect(randomBytes(32)).toHaveLength(32);
    expect(randomHex(8)).toMatch(/^[0-9a-f]{16}$/);
    expect(randomHex(8)).not.toBe(randomHex(8));
  });
});
