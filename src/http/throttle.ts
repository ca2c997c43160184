import { clientKey } from "../runtime/client-key.ts";
import { jsonResponse } from "./json.ts";

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
 * `FAILURE_REFILL_MS`. Only failures are counted and only the failing client is slowed. The webhook port checks
 * the right secret before it gets here, so a forge's delivery is never refused (a stranger's broken hook
 * behind the same address must not block it); the admin listener asks `throttled` first, so a client over its
 * budget has no credential checked at all and a guess gets no answer until its backoff ends.
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
    const tokens = this.tokens(known, now);
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
      return this.wait(tokens);
    }
    entry.tokens = tokens - 1;
    if (this.clients.size > this.maxClients) this.clients.delete(this.clients.keys().next().value!);
    return 0;
  }

  /** The failures `known` may make now: its tokens refilled since they were counted (a new client: the burst). */
  private tokens(known: { tokens: number; at: number } | undefined, now: number): number {
    return known ? Math.min(this.burst, known.tokens + (now - known.at) / this.refillMs) : this.burst;
  }

  /** Whole seconds until a client with `tokens` (under 1) may fail again. */
  private wait(tokens: number): number {
    return Math.max(1, Math.ceil(((1 - tokens) * this.refillMs) / 1000));
  }

  /**
   * The 429 for `address` while it is over its budget, counting nothing; undefined while it may still fail.
   * Asked before a credential is checked, it keeps a guesser from learning anything until its backoff ends.
   */
  throttled(address: string, now = Date.now()): Response | undefined {
    const tokens = this.tokens(this.clients.get(clientKey(address)), now);
    return tokens < 1 ? this.tooMany(this.wait(tokens)) : undefined;
  }

  /** The number of clients remembered (bounded by `maxClients`). */
  get size(): number {
    return this.clients.size;
  }

  /** The answer to a request that failed authentication: 401, or 429 with `Retry-After` once over budget. */
  refuse(address: string): Response {
    const wait = this.fail(address);
    return wait === 0 ? jsonResponse(401, UNAUTHORIZED) : this.tooMany(wait);
  }

  /** The 429 telling a client over its budget to wait `wait` seconds. */
  private tooMany(wait: number): Response {
    let headers = this.retryAfter.get(wait);
    if (!headers) this.retryAfter.set(wait, (headers = Object.freeze({ "retry-after": String(wait) })));
    return jsonResponse(429, THROTTLED, headers);
  }

  /** The `Retry-After` of each wait, frozen so its 429 is built once (a throttled flood gets the same few). */
  private readonly retryAfter = new Map<number, Readonly<Record<string, string>>>();
}
