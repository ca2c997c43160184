/**
 * Reading a request body. A signed request must be read before its signature can be checked, so its reads are
 * what clients without the secret can make the server do: each is charged to one budget shared by all such
 * requests, refused at once when the budget is spent, and cut when the body does not arrive in time.
 */
import { collectGarbage } from "../runtime/gc.ts";

/** The bytes of body that requests not authenticated yet may make the server hold, all of them together. */
export const UNAUTHENTICATED_BODY_BUDGET_BYTES = 32 * 1024 * 1024;

/** A body must arrive whole within this, or the request is answered 408 (a body that trickles holds its charge). */
export const BODY_READ_DEADLINE_MS = 30_000;

/**
 * What a read that keeps nothing (the body is only hashed) is charged: Bun hands the body over in chunks of up to
 * 1 MiB, one is buffered while another is hashed, and a hashed one is freed only at the next collection.
 */
export const STREAMED_BODY_CHARGE_BYTES = 2 * 1024 * 1024;

/** A kept body of unknown length (chunked, no Content-Length) is charged as it grows, at least this much at a time. */
const KEPT_STEP_BYTES = 256 * 1024;

/** A fixed number of bytes shared by all requests: taken before a read, given back when it ends. */
export class ByteBudget {
  #free: number;

  constructor(readonly total: number) {
    this.#free = total;
  }

  take(bytes: number): boolean {
    if (bytes > this.#free) return false;
    this.#free -= bytes;
    return true;
  }

  give(bytes: number): void {
    this.#free = Math.min(this.total, this.#free + bytes);
  }
}

export interface BodyReadOptions {
  /** Bytes past which the body is refused (maxBodyBytes). */
  limit: number;
  /** Keep the bytes (a branch filter reads them); otherwise each chunk only goes to `onChunk` and is dropped. */
  keep: boolean;
  /** The budget the read is charged to, for a request not authenticated yet. */
  budget?: ByteBudget;
  onChunk?: (chunk: Uint8Array) => void;
  /** @default BODY_READ_DEADLINE_MS */
  deadlineMs?: number;
}

export type BodyRead =
  /** `release` gives the charge back: call it once the body is no longer held for an unauthenticated request. */
  | { ok: true; body: Uint8Array | undefined; release: () => void }
  /** too large: over `limit`; busy: the budget is spent (nothing was read); timeout: over the deadline; aborted: the client went away. */
  | { ok: false; reason: "too large" | "busy" | "timeout" | "aborted" };

/** The declared Content-Length, when there is a valid one. */
export function declaredLength(request: Request): number | undefined {
  const value = request.headers.get("content-length");
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value);
}

/** Reads the body within `limit`, the budget and the deadline. On failure the charge is already given back. */
export async function readBody(request: Request, options: BodyReadOptions): Promise<BodyRead> {
  const declared = declaredLength(request);
  if (declared !== undefined && declared > options.limit) return { ok: false, reason: "too large" };
  const known = request.body ? declared : 0;
  let charged = options.keep
    ? (known ?? KEPT_STEP_BYTES)
    : Math.min(known ?? STREAMED_BODY_CHARGE_BYTES, STREAMED_BODY_CHARGE_BYTES);
  const budget = options.budget;
  if (budget && !budget.take(charged)) return { ok: false, reason: "busy" };
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    budget?.give(charged);
  };
  const failed = (reason: "too large" | "busy" | "timeout" | "aborted"): BodyRead => {
    release();
    return { ok: false, reason };
  };
  if (!request.body) return { ok: true, body: options.keep ? new Uint8Array() : undefined, release };

  const reader = request.body.getReader();
  // Each read races a promise of its own: one long-lived deadline promise raced on every read would keep every
  // chunk reachable through its reactions until the deadline.
  let expired = false;
  let wake: ((value: "expired") => void) | undefined;
  const timer = setTimeout(() => {
    expired = true;
    wake?.("expired");
  }, options.deadlineMs ?? BODY_READ_DEADLINE_MS);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>> | "expired";
      try {
        next = expired
          ? "expired"
          : await Promise.race([reader.read(), new Promise<"expired">((resolve) => (wake = resolve))]);
      } catch {
        return failed("aborted");
      } finally {
        wake = undefined;
      }
      if (next === "expired") {
        void reader.cancel().catch(() => {});
        return failed("timeout");
      }
      if (next.done) break;
      size += next.value.length;
      if (size > options.limit) {
        void reader.cancel().catch(() => {});
        return failed("too large");
      }
      if (options.keep && size > charged) {
        const more = Math.max(size - charged, KEPT_STEP_BYTES);
        if (budget && !budget.take(more)) {
          void reader.cancel().catch(() => {});
          return failed("busy");
        }
        charged += more;
      }
      options.onChunk?.(next.value);
      if (options.keep) chunks.push(next.value);
      // Body chunks are buffers the collector's pacing does not see, like a child's output.
      else collectGarbage(next.value.length);
    }
  } finally {
    clearTimeout(timer);
  }
  const body = options.keep ? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)) : undefined;
  return { ok: true, body, release };
}
