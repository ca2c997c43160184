/**
 * One check of a watch's Prometheus query: an instant query (`GET /api/v1/query`) whose answer must be one sample.
 * An error of any kind (Prometheus down, a bad query, no sample, several series, not a number) is a reading with
 * its reason, never a throw.
 */
import {
  type WatchPrometheus,
  type WatchValues,
  fillQuery,
  urlProblem,
  watchAuthorization,
  WATCH_PROMETHEUS_URL_ENV,
} from "../config/watch.ts";

/** A value, or why there is none. */
export type Reading = { value: number } | { problem: string };

/** The most of an answer that is read: one sample is a few hundred bytes. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** The longest one query may take. */
export const QUERY_LIMIT_MS = 10_000;

export interface QueryOptions {
  /** Where a relative credentials file is looked for (the service's directory). */
  cwd: string;
  /** The record's values for the query's placeholders. */
  values: WatchValues;
  /** Ends the query early (a cancel, a stop). */
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** The query as sent, placeholders filled in. */
export const queryOf = (prometheus: WatchPrometheus, values: WatchValues) => fillQuery(prometheus.query, values);

/** Runs the query once: its one value, or why not. */
export async function queryPrometheus(prometheus: WatchPrometheus, options: QueryOptions): Promise<Reading> {
  if (!prometheus.url) return { problem: `no Prometheus URL: set watch.prometheus.url or ${WATCH_PROMETHEUS_URL_ENV}` };
  // The environment's URL is checked here: a wrong one fails each check with why, never a throw.
  const wrong = urlProblem(prometheus.url);
  if (wrong) return { problem: `Prometheus URL: ${wrong}` };
  const auth = watchAuthorization(prometheus, options.cwd);
  if ("problem" in auth) return auth;
  const url = new URL("api/v1/query", prometheus.url.endsWith("/") ? prometheus.url : `${prometheus.url}/`);
  url.searchParams.set("query", queryOf(prometheus, options.values));
  const limitMs = options.timeoutMs ?? QUERY_LIMIT_MS;
  let response: Response;
  let text: string;
  try {
    const signal = AbortSignal.any([AbortSignal.timeout(limitMs), ...(options.signal ? [options.signal] : [])]);
    response = await fetch(url, {
      headers: { accept: "application/json", ...(auth.header ? { authorization: auth.header } : {}) },
      redirect: "manual",
      signal,
    });
    text = await bounded(response);
  } catch (error) {
    const err = error as Error & { code?: string };
    if (options.signal?.aborted) return { problem: "stopped" };
    if (err.name === "TimeoutError") return { problem: `Prometheus: no answer within ${limitMs} ms` };
    return { problem: `Prometheus: ${err.code ?? err.message}` };
  }
  return readAnswer(response.status, text);
}

/** The body, at most MAX_ANSWER_BYTES (then it throws). */
async function bounded(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => {});
      throw new Error(`an answer over ${MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

interface Answer {
  status?: unknown;
  errorType?: unknown;
  error?: unknown;
  data?: { resultType?: unknown; result?: unknown };
}

/** The one value of an answer of the query API (docs: "Format overview", "Expression query result formats"). */
export function readAnswer(status: number, text: string): Reading {
  let answer: Answer;
  try {
    answer = JSON.parse(text) as Answer;
  } catch {
    return { problem: `Prometheus: HTTP ${status}, not a JSON answer (is the URL Prometheus's?)` };
  }
  if (answer === null || typeof answer !== "object")
    return { problem: `Prometheus: HTTP ${status}, an answer that is no object` };
  if (answer.status !== "success") {
    const why = typeof answer.error === "string" ? answer.error.slice(0, 300) : "no reason given";
    const type = typeof answer.errorType === "string" ? `${answer.errorType}: ` : "";
    return { problem: `Prometheus: HTTP ${status}, ${type}${why}` };
  }
  const { resultType, result } = answer.data ?? {};
  let sample: unknown;
  if (resultType === "scalar") sample = result;
  else if (resultType === "vector" && Array.isArray(result)) {
    if (result.length === 0) return { problem: "no sample (the query matched no series)" };
    if (result.length > 1) return { problem: `${result.length} series, not one (aggregate the query, like sum(...))` };
    sample = (result[0] as { value?: unknown } | null)?.value;
  } else return { problem: `a ${String(resultType)} result, not one value` };
  const raw = Array.isArray(sample) ? sample[1] : undefined;
  if (typeof raw !== "string") return { problem: "an answer without a sample value" };
  const value = raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw);
  if (Number.isNaN(value)) return { problem: `not a number (${raw.slice(0, 40)})` };
  return { value };
}
