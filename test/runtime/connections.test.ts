import { describe, expect, test } from "bun:test";
import {
  ConnectionGuard,
  connectionLimits,
  DESCRIPTOR_RESERVE,
  descriptorLimit,
  MAX_CONNECTIONS,
} from "../../src/runtime/connections.ts";

const LIMITS = (soft: string) =>
  `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                524288               files\n`;

describe('connection bounds (docs/reliability.md "Faults and what the service does")', () => {
  test("the descriptor limit is the soft RLIMIT_NOFILE; 1024 when it cannot be read", () => {
    expect(descriptorLimit(LIMITS("20000"))).toBe(20000);
    expect(descriptorLimit(LIMITS("unlimited"))).toBe(Number.MAX_SAFE_INTEGER);
    expect(descriptorLimit(undefined)).toBe(1024);
    expect(descriptorLimit("garbage")).toBe(1024);
  });

  test("bounds stay below the limit minus the reserve, whatever each connection costs; one address gets half", () => {
    for (const limit of [64, 512, 1024, 20000, 65536, 1_000_000])
      for (const each of [1, 3]) {
        const { total, perClient } = connectionLimits(each, limit);
        const reserve = Math.max(DESCRIPTOR_RESERVE, Math.floor(limit / 4));
        expect(total).toBeLessThanOrEqual(Math.max(2, Math.floor((limit - reserve) / each)));
        expect(total).toBeLessThanOrEqual(MAX_CONNECTIONS);
        expect(perClient).toBe(Math.max(1, Math.floor(total / 2)));
      }
    expect(connectionLimits(3, 512)).toEqual({ total: 85, perClient: 42 });
    expect(connectionLimits(1, 65536)).toEqual({ total: MAX_CONNECTIONS, perClient: MAX_CONNECTIONS / 2 });
  });

  test("the guard counts per address (an IPv4 client through an IPv6 socket is one address) and frees on release", () => {
    const guard = new ConnectionGuard(1);
    const { total, perClient } = connectionLimits(1);
    let admitted = 0;
    for (let i = 0; i < perClient + 5; i++) if (guard.admit(i % 2 ? "10.0.0.1" : "::ffff:10.0.0.1")) admitted++;
    expect(admitted).toBe(perClient);
    expect(guard.admit("10.0.0.2")).toBe(true);
    guard.release("10.0.0.1");
    expect(guard.admit("::ffff:10.0.0.1")).toBe(true);
    expect(guard.admit("10.0.0.1")).toBe(false);
    expect(total).toBeGreaterThan(perClient);
  });
});
