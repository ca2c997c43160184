/**
 * readBody and its budget on web-standard Requests: what each read is charged, when the charge comes back,
 * and how a read ends (too large, busy, timeout). The end-to-end side is test/body-budget.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { ByteBudget, readBody, STREAMED_BODY_CHARGE_BYTES } from "../../src/http/body.ts";

const MB = 1024 * 1024;

/** A POST whose body is `pieces`, streamed; `open` leaves the stream unfinished (a client that stops sending). */
function post(pieces: Uint8Array[], headers: Record<string, string> = {}, open = false): Request {
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at < pieces.length) controller.enqueue(pieces[at++]!);
      else if (!open) controller.close();
      else return new Promise<void>(() => {});
    },
  });
  // @ts-expect-error `duplex` is needed for a streamed body; the DOM types do not know it.
  return new Request("http://localhost/", { method: "POST", body, headers, duplex: "half" });
}

/** The bytes the budget has free: the most that can be taken at once. */
function free(budget: ByteBudget): number {
  let low = 0;
  let high = budget.total;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (budget.take(mid)) {
      budget.give(mid);
      low = mid;
    } else high = mid - 1;
  }
  return low;
}

describe("readBody", () => {
  test("a declared Content-Length over the limit is refused before anything is read or charged", async () => {
    const budget = new ByteBudget(32 * MB);
    const read = await readBody(post([new Uint8Array(10)], { "content-length": "5000" }), {
      limit: 4096,
      keep: false,
      budget,
    });
    expect(read).toEqual({ ok: false, reason: "too large" });
    expect(free(budget)).toBe(32 * MB);
  });

  test("a body only hashed is not kept, is charged at most STREAMED_BODY_CHARGE_BYTES while read, and gives it back on release", async () => {
    const budget = new ByteBudget(32 * MB);
    const seen: number[] = [];
    const read = await readBody(post([new Uint8Array(3 * MB), new Uint8Array(3 * MB)]), {
      limit: 25 * MB,
      keep: false,
      budget,
      onChunk: (c) => seen.push(c.length),
    });
    if (!read.ok) throw new Error(read.reason);
    expect(read.body).toBeUndefined();
    expect(seen.reduce((a, b) => a + b, 0)).toBe(6 * MB);
    expect(free(budget)).toBe(32 * MB - STREAMED_BODY_CHARGE_BYTES);
    read.release();
    read.release();
    expect(free(budget)).toBe(32 * MB);
  });

  test("a kept body of unknown length is charged as it grows; past the budget it is refused busy and its charge comes back", async () => {
    const budget = new ByteBudget(4 * MB);
    const read = await readBody(post([new Uint8Array(2 * MB), new Uint8Array(2 * MB), new Uint8Array(1)]), {
      limit: 25 * MB,
      keep: true,
      budget,
    });
    expect(read).toEqual({ ok: false, reason: "busy" });
    expect(free(budget)).toBe(4 * MB);
    const fits = await readBody(post([new Uint8Array(2 * MB), new Uint8Array(1 * MB)]), {
      limit: 25 * MB,
      keep: true,
      budget,
    });
    if (!fits.ok) throw new Error(fits.reason);
    expect(fits.body?.length).toBe(3 * MB);
    expect(free(budget)).toBeLessThanOrEqual(1 * MB);
    fits.release();
    expect(free(budget)).toBe(4 * MB);
  });

  test("a read that finds the budget spent is refused busy without taking anything", async () => {
    const budget = new ByteBudget(STREAMED_BODY_CHARGE_BYTES);
    expect(budget.take(1)).toBe(true);
    const read = await readBody(post([new Uint8Array(10)]), { limit: 4096, keep: false, budget });
    expect(read).toEqual({ ok: false, reason: "busy" });
    expect(free(budget)).toBe(STREAMED_BODY_CHARGE_BYTES - 1);
  });

  test("a body over the limit without a Content-Length is refused once the limit is passed", async () => {
    const budget = new ByteBudget(32 * MB);
    const read = await readBody(post([new Uint8Array(3000), new Uint8Array(3000)], {}, true), {
      limit: 4096,
      keep: true,
      budget,
    });
    expect(read).toEqual({ ok: false, reason: "too large" });
    expect(free(budget)).toBe(32 * MB);
  });

  test("a body that stops arriving is cut at the deadline: timeout, and its charge comes back", async () => {
    const budget = new ByteBudget(32 * MB);
    const read = await readBody(post([new Uint8Array(100)], {}, true), {
      limit: 4096,
      keep: false,
      budget,
      deadlineMs: 100,
    });
    expect(read).toEqual({ ok: false, reason: "timeout" });
    expect(free(budget)).toBe(32 * MB);
  });

  test("no body: an empty body when kept, nothing charged left behind", async () => {
    const budget = new ByteBudget(32 * MB);
    const read = await readBody(new Request("http://localhost/", { method: "POST" }), {
      limit: 4096,
      keep: true,
      budget,
    });
    if (!read.ok) throw new Error(read.reason);
    expect(read.body?.length).toBe(0);
    read.release();
    expect(free(budget)).toBe(32 * MB);
  });
});
