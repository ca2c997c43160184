/**
 * One bounded read of a forge's API (gate/forges.ts says what each forge is asked): each answer at most 4 MiB,
 * each list at most 20 pages, one deadline for the whole read; the token goes to the API's own origin only (no
 * redirect followed, no page link elsewhere) and never into an error.
 */
import type { StatusTarget } from "../config/forge.ts";
import { basicCredential } from "../config/notify.ts";
import { shown } from "../system/shown.ts";
import type { ForgeRead, ReportedCheck } from "./types.ts";

const MAX_BODY = 4 * 1024 * 1024;
const MAX_PAGES = 20;
const MAX_MESSAGE = 200;
const REASONS: Record<number, string> = { 401: "Unauthorized", 403: "Forbidden", 404: "Not Found" };

/** Why a read stopped; `fatal` when reading again will not change it (a refusal, a forge answering out of bounds). */
export class ReadError extends Error {
  constructor(
    message: string,
    readonly fatal: boolean,
  ) {
    super(message);
  }
}

/** One read: the target, its headers, and the one deadline every page shares. */
export interface Read {
  target: StatusTarget;
  /** The forge's name in what the read says: GitHub, GitLab, Gitea, Bitbucket. */
  forge: string;
  headers: Record<string, string>;
  signal: AbortSignal;
  timedOut: () => boolean;
  timeoutMs: number;
}

/** The next page's URL after the page read from `url` (`items` entries), if any. */
export type Next = (url: URL, body: unknown, headers: Headers, items: number) => string | undefined;

/** Runs `run` within `options.timeoutMs` (and the caller's signal): its checks, or why they could not be read. */
export async function boundedRead(
  target: StatusTarget,
  forge: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; signal?: AbortSignal },
  run: (read: Read) => Promise<ReportedCheck[]>,
): Promise<ForgeRead> {
  // One controller for the deadline and the caller's stop (AbortSignal.any is missing from early Node 20 releases).
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  const onStop = () => controller.abort();
  options.signal?.addEventListener("abort", onStop, { once: true });
  if (options.signal?.aborted) controller.abort();
  const read: Read = {
    target,
    forge,
    headers: { "user-agent": "service-deploy-webhook", ...headers },
    signal: controller.signal,
    timedOut: () => timedOut,
    timeoutMs: options.timeoutMs,
  };
  try {
    return { ok: true, checks: await run(read) };
  } catch (error) {
    // Anything else (an apiUrl that is no URL) will not read better next time.
    const failure =
      error instanceof ReadError ? error : new ReadError(`${forge} could not be read: ${clip(String(error))}`, true);
    return { ok: false, fatal: failure.fatal, error: redact(failure.message, target.token) };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onStop);
  }
}

/** The value as a list, or a ReadError (the forge answered something else). */
export function asList(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new ReadError("", false);
  return value;
}

/** Every page of a list, from `first` through `next`, on the API's own origin, at most MAX_PAGES. */
export async function pages(
  read: Read,
  first: string,
  next: Next,
  items: (body: unknown) => unknown[],
  what: string,
): Promise<unknown[]> {
  const origin = new URL(read.target.apiUrl).origin;
  const all: unknown[] = [];
  let url = new URL(first);
  for (let page = 1; ; page++) {
    const { body, headers } = await get(read, url);
    let list: unknown[];
    try {
      list = items(body);
    } catch {
      throw new ReadError(`${read.forge} answered GET ${url.pathname} with no list of ${what}`, false);
    }
    all.push(...list);
    const link = next(url, body, headers, list.length);
    if (!link) return all;
    let target: URL;
    try {
      target = new URL(link, url);
    } catch {
      throw new ReadError(`${read.forge}'s next page of ${what} is not a URL`, true);
    }
    // The token goes to the API's own origin only.
    if (target.origin !== origin)
      throw new ReadError(
        `${read.forge}'s next page of ${what} is on another origin (${target.origin}): not followed`,
        true,
      );
    if (page === MAX_PAGES)
      throw new ReadError(`${read.forge} lists more than ${MAX_PAGES} pages of ${what}: not read`, true);
    url = target;
  }
}

/** One GET: the JSON body and the headers of a 2xx, or the ReadError that says why not. */
async function get(read: Read, url: URL): Promise<{ body: unknown; headers: Headers }> {
  const request = `GET ${url.pathname}`;
  let response: Response;
  try {
    response = await fetch(url, { method: "GET", headers: read.headers, redirect: "manual", signal: read.signal });
  } catch (error) {
    throw failed(read, request, error);
  }
  const status = `${response.status} ${REASONS[response.status] ?? response.statusText}`.trim();
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel();
    // A redirect would carry the token elsewhere; the apiUrl must name the API itself.
    throw new ReadError(`${read.forge} answered ${status} for ${request}: redirects are not followed`, true);
  }
  let raw: string;
  try {
    raw = await bounded(response);
  } catch (error) {
    if (error instanceof ReadError) throw new ReadError(`${read.forge} answered more than 4 MiB for ${request}`, true);
    throw failed(read, request, error);
  }
  if (!response.ok) {
    const message = errorMessage(raw, read.target.token);
    // A refusal stays a refusal; a busy, rate-limited or broken forge may answer next time.
    const limited = response.headers.get("x-ratelimit-remaining") === "0" || response.headers.has("retry-after");
    const fatal =
      response.status < 500 &&
      response.status !== 408 &&
      response.status !== 429 &&
      !(response.status === 403 && limited);
    throw new ReadError(`${read.forge} answered ${status} for ${request}${message ? `: ${message}` : ""}`, fatal);
  }
  try {
    return { body: JSON.parse(raw), headers: response.headers };
  } catch {
    throw new ReadError(`${read.forge} answered ${request} with malformed JSON`, false);
  }
}

function failed(read: Read, request: string, error: unknown): ReadError {
  if (read.timedOut())
    return new ReadError(`${read.forge} did not answer ${request} within ${read.timeoutMs} ms`, false);
  if (read.signal.aborted) return new ReadError(`the read of ${read.forge} was stopped (${request})`, false);
  const cause = (error as Error & { code?: string }).code ?? (error as Error).message;
  return new ReadError(`${read.forge} could not be reached for ${request}: ${clip(cause)}`, false);
}

/** The body as text, read up to MAX_BODY: past it the read stops (a ReadError with no message). */
async function bounded(response: Response): Promise<string> {
  if (Number(response.headers.get("content-length") ?? 0) > MAX_BODY) {
    await response.body?.cancel();
    throw new ReadError("", true);
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY) {
      await reader.cancel();
      throw new ReadError("", true);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** What a refusal says: GitHub's, Gitea's and GitLab's `message`, GitLab's `error`, Bitbucket's `error.message`. */
function errorMessage(raw: string, token: string): string {
  let said: unknown = raw;
  try {
    const body = JSON.parse(raw) as Record<string, unknown>;
    said =
      body?.message ??
      (body?.error as Record<string, unknown>)?.message ??
      body?.error_description ??
      body?.error ??
      raw;
  } catch {}
  return clip(redact(typeof said === "string" ? said : JSON.stringify(said), token));
}

/** On one line, at most MAX_MESSAGE characters. */
const clip = (value: string) => {
  const line = shown(value).replace(/\s+/g, " ").trim();
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE - 1)}…` : line;
};

/** The token, its password part and its Basic form never appear in what a read says. */
function redact(value: string, token: string): string {
  const secrets = [token, token.split(":").slice(1).join(":"), basicCredential(token)].filter((s) => s.length >= 4);
  return secrets.reduce((text, secret) => text.split(secret).join("[token]"), value);
}
