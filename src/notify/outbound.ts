/**
 * One outbound HTTP call (a commit status, a notification): a time limit per try, three tries with backoff on
 * network errors and 5xx, none on 4xx. Never throws. Calls in flight are tracked per owner (OutboundCalls) so a
 * stopping server can give its own a short grace period and then record them as not sent.
 */

export interface OutboundRequest {
  /** @default "POST" (GitLab updates a deployment with PUT, GitHub a comment with PATCH; a GET sends no body) */
  method?: "POST" | "PUT" | "PATCH" | "GET";
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface OutboundOptions {
  /** Time limit of each try. */
  timeoutMs: number;
  /** @default 3 */
  tries?: number;
  /** Pause before the second try; doubled before each later one. @default 500 */
  backoffMs?: number;
  /** The most of an answer's body read. @default 64 KiB */
  maxBody?: number;
}

export interface OutboundAnswer {
  ok: boolean;
  /** The HTTP status of the last answer; undefined when none came. */
  status?: number;
  /** What went wrong, or the start of a successful answer's body, on one line. */
  detail: string;
  /** The answer's body, its first `maxBody` bytes ("" when none came). */
  body?: string;
  tries: number;
  /** The same call will not do better (an SMTP server's 5xx, like an HTTP 4xx): it is not tried again. */
  final?: boolean;
}

/** One notification's outcome, as its owner is told it (its detail redacted). */
export interface Notified {
  /** The deploy's app ("default" in single-app mode). */
  app: string;
  format: string;
  /** How the entry is named (`email to ops@example.com`, `slack#2`). */
  label: string;
  /** The deploy. */
  id: string;
  ok: boolean;
  detail: string;
}

/** One try of a call that is not a plain HTTP request (an email): its answer, stopped when `stop` aborts. */
export type TryOnce = (stop: AbortSignal, n: number) => Promise<OutboundAnswer>;

/** Most of an answer's body read: a GitHub deployment (its id is needed) is a few KiB. */
const MAX_BODY = 64 * 1024;

const MAX_DETAIL = 200;

/** Why a call was stopped: the service stopped before it ended. */
export const NOT_SENT = "not sent: the service stopped before the call ended";

/**
 * The outbound calls of one owner (a server, a `service deploy`), and the work that leads to them: what its
 * stop waits for, then aborts. Two servers in one process each have their own, so stopping one never touches
 * the other's calls.
 */
export class OutboundCalls {
  /** `notified`: told each notification's outcome (the admin listener's counters, the service's log). */
  constructor(readonly notified?: (told: Notified) => void) {}

  /** Calls in flight, each with the way to stop it. */
  private readonly inFlight = new Map<Promise<OutboundAnswer>, AbortController>();
  /** Work that leads to calls (finding the commit, a status waiting for the one before it) and records outcomes. */
  private readonly pending = new Set<Promise<unknown>>();
  /** While above 0, a stop is under way: calls asked for now are not sent (a final status chained after a pending one). */
  private closing = 0;

  /**
   * Counts `work` as outbound work until it settles: a stop waits for it too. Never rejects (an unexpected error
   * ends as undefined): background work must not become an unhandled rejection.
   */
  track<T>(work: Promise<T>): Promise<T | undefined> {
    const tracked: Promise<T | undefined> = work.catch(() => undefined).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
    return tracked;
  }

  get size(): number {
    return this.inFlight.size + this.pending.size;
  }

  /**
   * Waits up to `graceMs` for the calls in flight (and the ones they lead to), then stops the rest: each ends
   * with NOT_SENT, which its caller records like any other outcome. `cut` ends the wait early (a Ctrl-C).
   */
  async settle(graceMs: number, cut?: AbortSignal): Promise<void> {
    const deadline = Date.now() + graceMs;
    // Bounded: every round either ends a call or the grace runs out (or `cut` ends it early).
    while (this.size > 0 && Date.now() < deadline && !cut?.aborted) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let onCut: (() => void) | undefined;
      const left = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, deadline - Date.now());
        onCut = resolve;
        cut?.addEventListener("abort", onCut, { once: true });
      });
      await Promise.race([Promise.allSettled([...this.inFlight.keys(), ...this.pending]), left]);
      clearTimeout(timer);
      if (onCut) cut?.removeEventListener("abort", onCut);
      // A finished call's outcome is written by its caller's `.then`: let that run before looking again.
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.closing++;
    try {
      // Bounded: what is left after the aborts only records outcomes, and new calls end at once as not sent.
      for (let round = 0; round < 10 && this.size > 0; round++) {
        for (const controller of this.inFlight.values()) controller.abort(new Error(NOT_SENT));
        await Promise.allSettled([...this.inFlight.keys(), ...this.pending]);
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      this.closing--;
    }
  }

  send(request: OutboundRequest, options: OutboundOptions): Promise<OutboundAnswer> {
    return this.sendBy((stop, n) => once(request, options, stop, n), options);
  }

  /** A call made of tries of `tryOnce`, by the rule of `send`: retried, tracked, stopped alike. */
  sendBy(tryOnce: TryOnce, options: OutboundOptions): Promise<OutboundAnswer> {
    if (this.closing > 0) return Promise.resolve({ ok: false, detail: NOT_SENT, tries: 0 });
    const controller = new AbortController();
    const call = attempt(tryOnce, options, controller.signal).finally(() => this.inFlight.delete(call));
    this.inFlight.set(call, controller);
    return call;
  }
}

async function attempt(tryOnce: TryOnce, options: OutboundOptions, stop: AbortSignal): Promise<OutboundAnswer> {
  const tries = options.tries ?? 3;
  let pause = options.backoffMs ?? 500;
  let last: OutboundAnswer = { ok: false, detail: "not tried", tries: 0 };
  for (let n = 1; n <= tries; n++) {
    if (n > 1) {
      await sleep(pause, stop);
      pause *= 2;
    }
    if (stop.aborted) return { ok: false, detail: NOT_SENT, tries: n - 1 };
    last = await tryOnce(stop, n);
    if (last.ok || stop.aborted || last.final) return last;
    // A 4xx says the request itself is wrong (a bad token, a wrong repo): the same request will not do better.
    if (last.status !== undefined && last.status < 500) return last;
  }
  return last;
}

async function once(
  request: OutboundRequest,
  { timeoutMs, maxBody = MAX_BODY }: OutboundOptions,
  stop: AbortSignal,
  n: number,
): Promise<OutboundAnswer> {
  // One controller for the time limit and the stop (AbortSignal.any is missing from early Node 20 releases).
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onStop = () => controller.abort();
  stop.addEventListener("abort", onStop, { once: true });
  try {
    const response = await fetch(request.url, {
      method: request.method ?? "POST",
      headers: { "user-agent": "service-deploy-webhook", ...request.headers },
      body: request.method === "GET" ? undefined : request.body,
      redirect: "manual",
      signal: controller.signal,
    });
    const body = await boundedText(response, controller.signal, maxBody);
    const text = body.slice(0, MAX_DETAIL).replace(/\s+/g, " ").trim();
    const detail = `${response.status}${response.statusText ? ` ${response.statusText}` : ""}${text ? `: ${text}` : ""}`;
    return {
      ok: response.status >= 200 && response.status < 300,
      status: response.status,
      detail: clip(detail),
      body,
      tries: n,
    };
  } catch (error) {
    if (stop.aborted) return { ok: false, detail: NOT_SENT, tries: n };
    if (timedOut) return { ok: false, detail: `no answer within ${timeoutMs} ms`, tries: n };
    const cause = (error as Error & { code?: string }).code ?? (error as Error).message;
    return { ok: false, detail: clip(`network error: ${cause}`), tries: n };
  } finally {
    clearTimeout(timer);
    stop.removeEventListener("abort", onStop);
  }
}

/** The start of the answer's body: enough to say why a forge refused (a 401 names the token problem). */
async function boundedText(response: Response, stop: AbortSignal, maxBody: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBody && !stop.aborted) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, maxBody).toString("utf8");
}

const clip = (text: string) => (text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL - 1)}…` : text);

function sleep(ms: number, stop: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      stop.removeEventListener("abort", done);
      resolve();
    }
    stop.addEventListener("abort", done, { once: true });
  });
}
