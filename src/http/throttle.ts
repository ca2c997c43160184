import { clientKey } from "../runtime/client-key.ts";
import { jsonResponse } from "./response.ts";

export { clientKey };

/** Failed authentications one client may make at once before it is answered 429. */
export const FAILURE_BURST = 20;

/** After the burst, one more failed authentication per this many milliseconds. */
export const FAILURE_REFILL_MS = 1000;

/** Clients remembered at most; the least recently refused is forgotten first, so memory stays bounded. */
export const MAX_CLIENTS = 10_000;

export const UNAUTHORIZED = Object.freeze({
  error: "unauthorized",
  message:
    "missing or wrong secret: send it as X-Service-Secret, Authorization: Bearer <secret> or X-Gitlab-Token, " +
    "or sign the body (X-Hub-Signature-256)",
});

const THROTTLED = Object.freeze({
  error: "too many failed authentications",
  message: `${UNAUTHORIZED.message}; too many wrong or missing secrets came from this address: wait Retry-After seconds`,
});

/**
 * The client a request comes from: the socket's address, or with `trustProxy` the rightmost
 * `X-Forwarded-For` entry (the one the proxy appended; entries left of it are whatever the client sent).
 */
export function clientAddress(headers: Headers, remoteAddress: () => string, trustProxy: boolean): string {
  const forwarded = trustProxy ? headers.get("x-forwarded-for")?.split(",").pop()?.trim() : undefined;
  return forwarded || remoteAddress();
}

/**
 * Failed authentications per client, as token buckets: `FAILURE_BURST` at once, then one per
 * `FAILURE_REFILL_MS`. Only failures are counted and only the failing client is slowed; a request with the
 * right secret is checked before it ever gets here, so it is never refused or delayed.
 */
export class FailureThrottle {
  /** Tokens left and when they were counted, per client key; insertion order = least recently refused first. */
  private readonly clients = new Map<string, { tokens: number; at: number }>();
  private lastAddress: string | undefined;
  private lastKey = "";
  /** The key last moved to the end of `clients`. */
  private newest: string | undefined;

  constructor(
    private readonly burst = FAILURE_BURST,
    private readonly refillMs = FAILURE_REFILL_MS,
    private readonly maxClients = MAX_CLIENTS,
  ) {}

  /**
   * Counts one failed authentication by `address`. Returns 0 while the client is within its budget, else
   * the seconds until it may fail again (the failure is then not counted: waiting is all it takes).
   */
  fail(address: string, now = Date.now()): number {
    // A flood comes from few addresses: the last one's key is kept.
    if (address !== this.lastAddress) [this.lastAddress, this.lastKey] = [address, clientKey(address)];
    const key = this.lastKey;
    const known = this.clients.get(key);
    const tokens = known ? Math.min(this.burst, known.tokens + (now - known.at) / this.refillMs) : this.burst;
    const entry = known ?? { tokens, at: now };
    // Moved to the end (most recently refused), unless it is there already: a flood's client always is.
    if (!known || key !== this.newest) {
      this.clients.delete(key);
      this.clients.set(key, entry);
      this.newest = key;
    }
    entry.at = now;
    if (tokens < 1) {
      entry.tokens = tokens;
      return Math.max(1, Math.ceil(((1 - tokens) * this.refillMs) / 1000));
    }
    entry.tokens = tokens - 1;
    if (this.clients.size > this.maxClients) this.clients.delete(this.clients.keys().next().value!);
    return 0;
  }

  /** The number of clients remembered (bounded by `maxClients`). */
  get size(): number {
    return this.clients.size;
  }

  /** The answer to a request that failed authentication: 401, or 429 with `Retry-After` once over budget. */
  refuse(address: string): Response {
    const wait = this.fail(address);
    if (wait === 0) return jsonResponse(401, UNAUTHORIZED);
    let headers = this.retryAfter.get(wait);
    if (!headers) this.retryAfter.set(wait, (headers = Object.freeze({ "retry-after": String(wait) })));
    return jsonResponse(429, THROTTLED, headers);
  }

  /** The `Retry-After` of each wait, frozen so its 429 is built once (a throttled flood gets the same few). */
  private readonly retryAfter = new Map<number, Readonly<Record<string, string>>>();
}
