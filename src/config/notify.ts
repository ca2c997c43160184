/**
 * The checks of the `status` and `notify` keys as a user writes them (their shapes are in schema.ts). keys.ts
 * calls these for its `status` and `notify` kinds; what the keys do is notify/commit-status.ts and
 * notify/payloads.ts. Also the status token (read here so that config/deploy-secrets.ts knows it too).
 */
import { readNoFollow } from "../system/files.ts";
import { resolve } from "node:path";
import {
  FORMATS,
  NOTIFY_EVENTS,
  type NotifyEvent,
  type NotifyTarget,
  PROVIDERS,
  type StatusSettings,
} from "./schema-notify.ts";
import { MAX_TIMER_MS } from "./schema.ts";
import { CHANNEL_KEYS, channelKey, checkChannel, DEFAULT_CHANNEL_URL } from "./channels.ts";
import { show } from "./show.ts";

const STATUS_KEYS = [
  "provider",
  "repo",
  "token",
  "tokenFile",
  "apiUrl",
  "context",
  "targetUrl",
  "timeoutMs",
  "deployments",
  "environment",
];
const TARGET_KEYS = ["url", "format", "on", "headers", "timeoutMs", ...CHANNEL_KEYS];

const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const isMapping = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** A URL the service may call: http or https, nothing else (no file:, no data:). */
function httpUrl(value: unknown): boolean {
  if (typeof value !== "string") return false;
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

function timeout(value: unknown, where: string, problems: string[]): number | undefined {
  const n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n === "number" && Number.isSafeInteger(n) && n > 0 && n <= MAX_TIMER_MS) return n;
  problems.push(
    `${where}: timeoutMs: expected a positive integer of milliseconds, at most ${MAX_TIMER_MS}, got ${show(value)}`,
  );
  return undefined;
}

/** The known keys of a mapping, camelCased; an unknown key is a problem (a typo would silently do nothing). */
function entries(
  raw: Record<string, unknown>,
  allowed: string[],
  where: string,
  problems: string[],
): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [rawKey, value] of Object.entries(raw)) {
    const key = toCamel(rawKey);
    if (!allowed.includes(key)) problems.push(`${where}: unknown key "${rawKey}" (allowed: ${allowed.join(", ")})`);
    else if (value !== null && value !== undefined) out.push([key, value]);
  }
  return out;
}

/** Checks a `status` value; every problem goes to `problems`. Tokens are never shown in a problem. */
export function normalizeStatus(value: unknown, where: string, problems: string[]): StatusSettings {
  if (!isMapping(value)) {
    problems.push(
      `${where}: expected a mapping (provider, repo, token, apiUrl, context, targetUrl), got ${show(value)}`,
    );
    return {};
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of entries(value, STATUS_KEYS, where, problems)) {
    if (key === "timeoutMs") out[key] = timeout(item, where, problems);
    else if (key === "deployments")
      typeof item === "boolean"
        ? (out[key] = item)
        : problems.push(`${where}: deployments: expected true or false, got ${show(item)}`);
    else if (key === "repo" && typeof item === "number" && Number.isSafeInteger(item)) out[key] = String(item);
    else if (typeof item !== "string" || item.trim() === "")
      problems.push(`${where}: ${key}: expected a non-empty string${key === "token" ? "" : `, got ${show(item)}`}`);
    else if (key === "provider" && !(PROVIDERS as readonly string[]).includes(item))
      problems.push(`${where}: provider: expected one of ${PROVIDERS.join(", ")}, got ${show(item)}`);
    // Not shown: a URL may carry credentials.
    else if (key === "apiUrl" && !httpUrl(item)) problems.push(`${where}: apiUrl: expected an http(s) URL`);
    else out[key] = key === "apiUrl" ? item.replace(/\/+$/, "") : item;
  }
  return out as StatusSettings;
}

/** Checks a `notify` value (a list of targets; one mapping is taken as a list of one). */
export function normalizeNotify(value: unknown, where: string, problems: string[]): NotifyTarget[] {
  const list = isMapping(value) ? [value] : value;
  if (!Array.isArray(list)) {
    problems.push(`${where}: expected a list of { url, format, on, headers }, got ${show(value)}`);
    return [];
  }
  return list.map((raw, index) => {
    const at = `${where}, entry ${index + 1}`;
    if (!isMapping(raw)) {
      problems.push(`${at}: expected a mapping { url, format, on, headers }, got ${show(raw)}`);
      return { url: "" };
    }
    const out: Record<string, unknown> = {};
    for (const [key, item] of entries(raw, TARGET_KEYS, at, problems)) {
      if (key === "timeoutMs") out[key] = timeout(item, at, problems);
      // The URL of a chat webhook is itself a secret: it is never repeated in a message.
      else if (key === "url") httpUrl(item) ? (out[key] = item) : problems.push(`${at}: url: expected an http(s) URL`);
      else if (key === "format")
        (FORMATS as readonly unknown[]).includes(item)
          ? (out[key] = item)
          : problems.push(`${at}: format: expected one of ${FORMATS.join(", ")}, got ${show(item)}`);
      else if (key === "on") out[key] = notifyOn(item, at, problems);
      else if (key === "headers") out[key] = headers(item, at, problems);
      else channelKey(key, item, at, problems, out);
    }
    const format = out.format as string | undefined;
    const urlNeeded = format !== "email" && !(format && format in DEFAULT_CHANNEL_URL);
    if (urlNeeded && !("url" in out) && !problems.some((p) => p.startsWith(`${at}: url`)))
      problems.push(`${at}: url is required`);
    checkChannel(out, at, problems);
    return out as unknown as NotifyTarget;
  });
}

function notifyOn(value: unknown, where: string, problems: string[]): NotifyEvent[] {
  const list = typeof value === "string" ? value.split(",").map((s) => s.trim()) : value;
  if (!Array.isArray(list)) {
    problems.push(`${where}: on: expected a list of ${NOTIFY_EVENTS.join(", ")}, got ${show(value)}`);
    return [];
  }
  const out: NotifyEvent[] = [];
  for (const item of list) {
    if ((NOTIFY_EVENTS as readonly unknown[]).includes(item)) out.push(item as NotifyEvent);
    else problems.push(`${where}: on: unknown event ${show(item)} (expected ${NOTIFY_EVENTS.join(", ")})`);
  }
  return out;
}

function headers(value: unknown, where: string, problems: string[]): Record<string, string> {
  if (!isMapping(value)) {
    problems.push(`${where}: headers: expected a mapping of header names to values`);
    return {};
  }
  const out: Record<string, string> = {};
  for (const [name, item] of Object.entries(value)) {
    // Values are not shown: an Authorization header is the usual reason for `headers`.
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      problems.push(`${where}: headers: ${JSON.stringify(name)} is not a header name`);
    else if ((typeof item !== "string" && typeof item !== "number") || /[\r\n\0]/.test(String(item)))
      problems.push(`${where}: headers: the value of ${name} must be a one-line string`);
    else out[name] = String(item);
  }
  return out;
}

/** The token variable, for an entry that sets neither `token` nor `tokenFile`. */
export const STATUS_TOKEN_ENV = "SERVICE_STATUS_TOKEN";

/** `token`, else the first line of `tokenFile`, else SERVICE_STATUS_TOKEN: what the entry names wins. */
export function statusToken(
  settings: StatusSettings,
  cwd: string,
  env: NodeJS.ProcessEnv,
): { token: string } | { problem: string } {
  if (settings.token) return { token: settings.token.trim() };
  if (settings.tokenFile) {
    const file = resolve(cwd, settings.tokenFile);
    try {
      const token = readNoFollow(file, true).split("\n")[0]!.trim();
      if (token) return { token };
      return { problem: `status: the token file ${file} is empty` };
    } catch (error) {
      return {
        problem: `status: cannot read the token file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      };
    }
  }
  const fromEnv = env[STATUS_TOKEN_ENV]?.trim();
  if (fromEnv) return { token: fromEnv };
  return { problem: `status: no token: set token, tokenFile or ${STATUS_TOKEN_ENV}` };
}

/** The credential of HTTP Basic authentication for `user:password`, as the header carries it. */
export const basicCredential = (userPassword: string) => Buffer.from(userPassword).toString("base64");
