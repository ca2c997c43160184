/**
 * The webhook port's answers that are not a deploy's stream: the refusals (built once, frozen), the 429 of a full
 * queue, and the opt-in acknowledgement.
 */
import type { ResolvedApp } from "../config/apps.ts";
import { LOG_DIR } from "../history/record.ts";
import { QueueFullError } from "../queue/queue.ts";
import { BODY_READ_DEADLINE_MS, UNAUTHENTICATED_BODY_BUDGET_BYTES, type BodyRead } from "./body.ts";
import { jsonResponse } from "./json.ts";

export const NOT_FOUND = Object.freeze({
  error: "not found",
  message: "this service accepts POST requests on its webhook path only",
});
export const SHUTTING_DOWN = Object.freeze({
  error: "shutting down",
  message: "the service is stopping and accepts no new deploys",
});

const BUSY = Object.freeze({
  error: "busy",
  message: `too many signed request bodies are being read at once (${UNAUTHENTICATED_BODY_BUDGET_BYTES / 1024 ** 2} MiB budget); try again later`,
});
const TIMED_OUT = Object.freeze({
  error: "request timeout",
  message: `the request body did not arrive within ${BODY_READ_DEADLINE_MS / 1000} s`,
});
export const GONE = Object.freeze({
  error: "connection closed",
  message: "the connection closed before the deploy was accepted; nothing was deployed",
});

/** 429 for a repository whose queue is full; any other error goes on up. */
export function queueFull(app: ResolvedApp, error: unknown): Response {
  if (!(error instanceof QueueFullError)) throw error;
  return jsonResponse(
    429,
    { error: "queue full", message: `${error.message}; try again later (queueLimit is ${app.queueLimit})` },
    { "retry-after": "30" },
  );
}

/** The 413 of an app (frozen: serialised once per app and limit). */
const tooLargeOf = new WeakMap<ResolvedApp, { limit: number; body: object }>();
export function tooLarge(app: ResolvedApp): object {
  let known = tooLargeOf.get(app);
  if (known?.limit !== app.maxBodyBytes) {
    known = {
      limit: app.maxBodyBytes,
      body: Object.freeze({
        error: "payload too large",
        message: `the request body is over maxBodyBytes (${app.maxBodyBytes} bytes)`,
      }),
    };
    tooLargeOf.set(app, known);
  }
  return known.body;
}

/** The answer to a body that could not be read. */
export function refusedBody(reason: Exclude<BodyRead, { ok: true }>["reason"], tooLarge: object): Response {
  if (reason === "too large") return jsonResponse(413, tooLarge);
  if (reason === "busy") return jsonResponse(503, BUSY, { "retry-after": "30" });
  // The rest of a trickling body is not waited for: the connection closes with the answer.
  if (reason === "timeout") return jsonResponse(408, TIMED_OUT, { connection: "close" });
  return jsonResponse(400, GONE);
}

/**
 * The opt-in immediate answer: the deploy id and where its logs will be, in the service's working directory (no
 * directory of the server goes to a client); the deploy runs on.
 */
export function acknowledgement(id: string, position: number, app: ResolvedApp, json: boolean): Response {
  const logs = `${LOG_DIR}/*_${id}.{json,log}`;
  const state = position > 0 ? `queued at position ${position}` : "started";
  if (json) return jsonResponse(200, { accepted: true, id, app: app.name ?? null, state, position, logs });
  const lines = [
    `[accepted] deploy ${id} ${state}`,
    `[accepted] logs: ${logs}`,
    `[accepted] follow it with: service logs ${id.slice(0, 8)} --follow`,
  ];
  return new Response(`${lines.join("\n")}\n`, { headers: { "content-type": "text/plain; charset=utf-8" } });
}
