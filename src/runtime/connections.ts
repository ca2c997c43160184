import { readFileSync } from "node:fs";
import { clientKey } from "./client-key.ts";

/**
 * How many connections the listening ports may hold. Every accepted connection takes descriptors, and a flood of
 * connections that never send a request (or that send nothing but wrong secrets) would otherwise take them all:
 * the running deploy's next command then fails with EMFILE. So the connections of all the process's listeners
 * are counted together, in all and per client address, and bounded well below the descriptor limit, keeping a
 * reserve for the deploys; a connection past a bound is answered 503 and closed as soon as it is accepted.
 */

/** Descriptors never given to connections: deploys (pipes, log files, git), outbound calls, the rest. */
export const DESCRIPTOR_RESERVE = 256;

/** Connections held at most however high the descriptor limit is: each also costs memory. */
export const MAX_CONNECTIONS = 4096;

export interface ConnectionLimits {
  /** Connections held at once by all the listeners of the process. */
  total: number;
  /** Connections held at once from one client (an address, an IPv6 /64): half the total, so one never takes them all. */
  perClient: number;
}

/**
 * The descriptor limit in `/proc/<pid>/limits` text: the soft RLIMIT_NOFILE (which Bun and Node raise to the hard
 * one at start); 1024 when it cannot be told.
 */
export function descriptorLimit(limits: string | undefined): number {
  const soft = /^Max open files\s+(\S+)/m.exec(limits ?? "")?.[1];
  if (soft === "unlimited") return Number.MAX_SAFE_INTEGER;
  const value = Number(soft);
  return Number.isInteger(value) && value > 0 ? value : 1024;
}

function readLimits(): string | undefined {
  try {
    return readFileSync("/proc/self/limits", "utf8");
  } catch {
    return undefined;
  }
}

/**
 * The bounds for a runtime whose connections take `descriptorsEach` descriptors: what the limit leaves after the
 * reserve (256, or a quarter of the limit when that is more), at most MAX_CONNECTIONS.
 */
export function connectionLimits(descriptorsEach: number, limit = descriptorLimit(readLimits())): ConnectionLimits {
  const reserve = Math.max(DESCRIPTOR_RESERVE, Math.floor(limit / 4));
  const total = Math.max(2, Math.min(MAX_CONNECTIONS, Math.floor((limit - reserve) / descriptorsEach)));
  return { total, perClient: Math.max(1, Math.floor(total / 2)) };
}

/**
 * The connections held now, in all and per client address. One per process: the descriptors it protects are
 * the process's, shared by every listener (the webhook port, the admin port, a second library server).
 */
export class ConnectionGuard {
  private total = 0;
  private readonly perClient = new Map<string, number>();
  private limits: ConnectionLimits | undefined;

  constructor(private readonly descriptorsEach: number) {}

  /** Counts a new connection from `address`; false (and not counted) when it is past a bound. */
  admit(address: string): boolean {
    this.limits ??= connectionLimits(this.descriptorsEach);
    const key = clientKey(address);
    const held = this.perClient.get(key) ?? 0;
    if (this.total >= this.limits.total || held >= this.limits.perClient) return false;
    this.total++;
    this.perClient.set(key, held + 1);
    return true;
  }

  /** Forgets a connection `admit` counted, once it has closed. */
  release(address: string): void {
    const key = clientKey(address);
    const held = this.perClient.get(key) ?? 0;
    if (held <= 0) return;
    this.total--;
    if (held === 1) this.perClient.delete(key);
    else this.perClient.set(key, held - 1);
  }
}

const BUSY_BODY = JSON.stringify({
  error: "too many connections",
  message: "the service holds as many connections as it may (in all, or from this address): try again later",
});

/** The raw answer to a connection past a bound, written before it is closed. */
export const TOO_MANY_CONNECTIONS = `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 5\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(BUSY_BODY)}\r\n\r\n${BUSY_BODY}`;
