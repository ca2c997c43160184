/**
 * The notification channels that are more than a webhook URL: email over SMTP, Telegram, Microsoft Teams,
 * Matrix and Gotify. Their keys of a `notify` entry, the checks of each (called by config/notify.ts), the
 * defaults, the `template` and its fields, and the secret files they read (tokenFile, passwordFile).
 */
import { resolve } from "node:path";
import { readNoFollow } from "../system/files.ts";
import { show } from "./show.ts";

export const CHANNEL_FORMATS = ["email", "telegram", "teams", "matrix", "gotify"] as const;
export type ChannelFormat = (typeof CHANNEL_FORMATS)[number];

/** How an email reaches its server: STARTTLS after a plain greeting, TLS from the first byte, or none at all. */
export const EMAIL_TLS = ["starttls", "implicit", "none"] as const;
export type EmailTls = (typeof EMAIL_TLS)[number];

/** The fields a `template` may name, `{{field}}`. */
export const TEMPLATE_FIELDS = [
  "app",
  "outcome",
  "commit",
  "commitMessage",
  "actor",
  "url",
  "reason",
  "duration",
  "tag",
  "previewUrl",
] as const;
export type TemplateField = (typeof TEMPLATE_FIELDS)[number];

/** The keys of the channels, on top of `url`, `format`, `on`, `headers`, `timeoutMs`. */
export interface ChannelSettings {
  /** The message's text instead of the one-line summary (every format but json). */
  template?: string;
  /** telegram, matrix, gotify: the file whose first line is the token. */
  tokenFile?: string;
  /** telegram: the chat (a number, or `@channel`). */
  chatId?: string;
  /** matrix: the room (`!abc:example.org`). */
  roomId?: string;
  /** email: the SMTP server. */
  host?: string;
  /** @default 465 with `tls: implicit`, 587 with starttls, else 25 */
  port?: number;
  /** @default starttls with `user`; without it, STARTTLS when the server offers it */
  tls?: EmailTls;
  user?: string;
  passwordFile?: string;
  /** A PEM file of the certificate authority that signed the server's certificate (one of your own). */
  caFile?: string;
  from?: string;
  to?: string[];
}

/** The API each format calls when `url` is not set: the public one, where there is one. */
export const DEFAULT_CHANNEL_URL: Partial<Record<ChannelFormat, string>> = {
  telegram: "https://api.telegram.org",
  matrix: "https://matrix-client.matrix.org",
};

/** The keys of each channel; another channel's key is a problem (it would silently do nothing). */
const KEYS_OF: Record<ChannelFormat, (keyof ChannelSettings | "url" | "headers")[]> = {
  email: ["host", "port", "tls", "user", "passwordFile", "caFile", "from", "to", "template"],
  telegram: ["url", "tokenFile", "chatId", "template", "headers"],
  teams: ["url", "template", "headers"],
  matrix: ["url", "tokenFile", "roomId", "template", "headers"],
  gotify: ["url", "tokenFile", "template", "headers"],
};

/** The keys this file checks. */
export const CHANNEL_KEYS = [
  "template",
  "tokenFile",
  "chatId",
  "roomId",
  "host",
  "port",
  "tls",
  "user",
  "passwordFile",
  "caFile",
  "from",
  "to",
];

const ADDRESS = /^[^\s@<>,;:"()\\[\]]+@[^\s@<>,;:"()\\[\]]+$/;
/** `ops@example.com`, or `Deploys <ops@example.com>` for `from`. */
const mailbox = (value: string, named: boolean) => {
  const match = named ? /^([^<>\r\n"]*)<([^<>]+)>$/.exec(value.trim()) : null;
  return ADDRESS.test(match ? match[2]!.trim() : value.trim());
};

/** Checks one channel key of an entry into `out`. */
export function channelKey(
  key: string,
  item: unknown,
  at: string,
  problems: string[],
  out: Record<string, unknown>,
): void {
  const text = typeof item === "number" && (key === "chatId" || key === "port") ? String(item) : item;
  if (key === "to") {
    const list = typeof text === "string" ? [text] : text;
    if (!Array.isArray(list) || list.length === 0 || list.some((a) => typeof a !== "string" || !mailbox(a, false)))
      problems.push(`${at}: to: expected a list of email addresses, got ${show(item)}`);
    else out.to = list.map((a: string) => a.trim());
    return;
  }
  if (typeof text !== "string" || text.trim() === "" || (key !== "template" && /[\r\n\0]/.test(text))) {
    problems.push(
      `${at}: ${key}: expected a non-empty ${key === "template" ? "" : "one-line "}string, got ${show(item)}`,
    );
    return;
  }
  if (key === "port") {
    const port = Number(text);
    if (/^\d+$/.test(text.trim()) && port >= 1 && port <= 65535) out.port = port;
    else problems.push(`${at}: port: expected a port number (1-65535), got ${show(item)}`);
  } else if (key === "tls") {
    if ((EMAIL_TLS as readonly string[]).includes(text)) out.tls = text;
    else problems.push(`${at}: tls: expected one of ${EMAIL_TLS.join(", ")}, got ${show(item)}`);
  } else if (key === "from") {
    if (mailbox(text, true)) out.from = text.trim();
    else problems.push(`${at}: from: expected an email address (ops@example.com or "Deploys <ops@example.com>")`);
  } else if (key === "host") {
    if (/^[A-Za-z0-9.:[\]-]+$/.test(text)) out.host = text;
    else problems.push(`${at}: host: expected a host name or address, got ${show(item)}`);
  } else if (key === "template") {
    const unknown = [...text.matchAll(/\{\{\s*([^{}]*?)\s*\}\}/g)]
      .map((m) => m[1]!)
      .filter((field) => !(TEMPLATE_FIELDS as readonly string[]).includes(field));
    if (unknown.length > 0)
      problems.push(
        `${at}: template: unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((f) => `{{${f}}}`).join(", ")} (fields: ${TEMPLATE_FIELDS.join(", ")})`,
      );
    else out.template = text;
  } else out[key] = text.trim();
}

/** The checks of an entry as a whole: what its format needs, what it must not have, and the defaults. */
export function checkChannel(out: Record<string, unknown>, at: string, problems: string[]): void {
  const format = (out.format ?? "json") as string;
  if (!(CHANNEL_FORMATS as readonly string[]).includes(format)) {
    const foreign = CHANNEL_KEYS.filter((key) => key !== "template" && key in out);
    if (foreign.length > 0) problems.push(`${at}: ${foreign.join(", ")}: not a key of format ${format}`);
    if (format === "json" && "template" in out)
      problems.push(`${at}: template: format json sends the documented payload; a template is for the other formats`);
    return;
  }
  const own = KEYS_OF[format as ChannelFormat] as string[];
  const foreign = [...CHANNEL_KEYS, "url", "headers"].filter((key) => key in out && !own.includes(key));
  if (foreign.length > 0) problems.push(`${at}: ${foreign.join(", ")}: not a key of format ${format}`);
  const need = (keys: string[]) => {
    for (const key of keys) if (!(key in out)) problems.push(`${at}: format ${format} needs ${key}`);
  };
  if (format === "email") {
    out.url = "";
    need(["host", "from", "to"]);
    if (out.tls === "none" && out.user)
      problems.push(`${at}: tls: none sends the password unencrypted; use starttls or implicit with user`);
    if (out.user && !out.passwordFile) problems.push(`${at}: user needs passwordFile`);
    if (out.passwordFile && !out.user) problems.push(`${at}: passwordFile needs user`);
    if (!out.tls && out.user) out.tls = "starttls";
    out.port ??= out.tls === "implicit" ? 465 : out.tls === "starttls" ? 587 : 25;
    return;
  }
  const fallback = DEFAULT_CHANNEL_URL[format as ChannelFormat];
  if (!("url" in out) && fallback) out.url = fallback;
  if (typeof out.url === "string") out.url = out.url.replace(/\/+$/, "");
  if (format !== "teams") need(["tokenFile"]);
  if (format === "telegram") need(["chatId"]);
  if (format === "matrix") need(["roomId"]);
}

/** The first line of a secret file (`tokenFile`, `passwordFile`), read at each use: what the file says now. */
export function channelSecret(
  file: string,
  cwd: string,
  key: "tokenFile" | "passwordFile",
): { secret: string } | { problem: string } {
  const path = resolve(cwd, file);
  try {
    const secret = readNoFollow(path, true).split("\n")[0]!.trim();
    return secret ? { secret } : { problem: `${key}: ${path} is empty` };
  } catch (error) {
    return {
      problem: `${key}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    };
  }
}

/** The secrets of a channel entry that the files hold now (for the redaction set); none when unreadable. */
export function channelSecrets(target: ChannelSettings, cwd: string): string[] {
  const out: string[] = [];
  if (target.tokenFile) {
    const token = channelSecret(target.tokenFile, cwd, "tokenFile");
    if ("secret" in token) out.push(token.secret);
  }
  if (target.passwordFile) {
    const password = channelSecret(target.passwordFile, cwd, "passwordFile");
    if ("secret" in password) {
      const user = target.user ?? "";
      // As SMTP AUTH carries it: PLAIN (NUL user NUL password) and LOGIN (each alone), base64.
      out.push(
        password.secret,
        Buffer.from(`\0${user}\0${password.secret}`).toString("base64"),
        Buffer.from(password.secret).toString("base64"),
      );
    }
  }
  return out;
}
