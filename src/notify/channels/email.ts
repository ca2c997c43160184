/**
 * Email over SMTP through nodemailer (loaded only for a server with an `email` entry: this file is imported
 * dynamically). `tls`: `implicit` is TLS from the first byte, `starttls` requires the upgrade (the default with
 * `user`), `none` never upgrades (a relay on the same host; never with `user`); without `tls` and `user`, the upgrade
 * happens when the server offers it. Certificates are always verified (`caFile` adds a certificate authority).
 */
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { resolve } from "node:path";
import type { NotifyTarget } from "../../config/schema-notify.ts";
import { NOT_SENT, type OutboundAnswer } from "../outbound.ts";
import { messageText, type NotifyPayload, summary } from "../payloads.ts";
import { asText, headline, oneLine } from "./template.ts";

/** Longest subject: mail clients cut far before it. */
const MAX_SUBJECT = 200;
const MAX_DETAIL = 200;

/** The message of a payload: its headers (each one line) and its plain-text body. */
export function emailMessage(target: NotifyTarget, payload: NotifyPayload) {
  const subject = oneLine(summary(payload));
  return {
    from: target.from!,
    to: target.to ?? [],
    subject: subject.length > MAX_SUBJECT ? `${subject.slice(0, MAX_SUBJECT - 1)}…` : subject,
    text: `${messageText(payload, false, Infinity, headline(target.template, payload, asText))}\n`,
    headers: {
      "X-Service-Deploy": oneLine(payload.id),
      "X-Service-App": oneLine(payload.app ?? ""),
      "X-Service-Outcome": payload.outcome,
    },
  };
}

/** The settings of the connection, as nodemailer takes them. */
function transportOptions(target: NotifyTarget, password: string | undefined, cwd: string, timeoutMs: number) {
  // As config/channels.ts sets them, again for a configuration that did not go through it (the library's).
  const tls = target.tls ?? (target.user ? "starttls" : undefined);
  return {
    host: target.host,
    port: target.port ?? (tls === "implicit" ? 465 : tls === "starttls" ? 587 : 25),
    secure: tls === "implicit",
    requireTLS: tls === "starttls",
    ignoreTLS: target.tls === "none",
    auth: target.user ? { user: target.user, pass: password ?? "" } : undefined,
    tls: {
      rejectUnauthorized: true,
      // SNI names a host, never an address (a certificate for an address is checked against it all the same).
      ...(target.host && isIP(target.host) === 0 ? { servername: target.host } : {}),
      ...(target.caFile ? { ca: readFileSync(resolve(cwd, target.caFile), "utf8") } : {}),
    },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  };
}

/** One try: the message sent, or why not (the server's reply, as `535 5.7.8 Authentication failed`). */
export async function sendEmail(
  target: NotifyTarget,
  payload: NotifyPayload,
  password: string | undefined,
  cwd: string,
  timeoutMs: number,
  stop: AbortSignal,
  n: number,
): Promise<OutboundAnswer> {
  if (target.user && target.tls === "none")
    return { ok: false, detail: "tls: none would send the password unencrypted: not sent", tries: n, final: true };
  let transport: import("nodemailer").Transporter;
  try {
    // Imported here, not at the top: a one-file build (the Node.js library) keeps it a dynamic import too.
    const { default: nodemailer } = await import("nodemailer");
    transport = nodemailer.createTransport(transportOptions(target, password, cwd, timeoutMs));
  } catch (error) {
    return {
      ok: false,
      detail: clip(`cannot set up the connection: ${(error as Error).message}`),
      tries: n,
      final: true,
    };
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onStop: (() => void) | undefined;
  const cut = new Promise<OutboundAnswer>((settle) => {
    timer = setTimeout(() => settle({ ok: false, detail: `no answer within ${timeoutMs} ms`, tries: n }), timeoutMs);
    onStop = () => settle({ ok: false, detail: NOT_SENT, tries: n });
    stop.addEventListener("abort", onStop, { once: true });
  });
  const sent = transport.sendMail(emailMessage(target, payload)).then(
    (info): OutboundAnswer => ({ ok: true, detail: clip(oneLine(String(info.response ?? "sent"))), tries: n }),
    (error: Error & { code?: string; responseCode?: number; response?: string }): OutboundAnswer => {
      const code = error.responseCode;
      const detail = error.response
        ? oneLine(error.response)
        : `${error.code ? `${error.code}: ` : ""}${error.message}`;
      // A permanent refusal (5xx: bad credentials, an unknown recipient) is the same at the next try.
      return { ok: false, detail: clip(detail), tries: n, final: code !== undefined && code >= 500 };
    },
  );
  try {
    return await Promise.race([sent, cut]);
  } finally {
    clearTimeout(timer);
    if (onStop) stop.removeEventListener("abort", onStop);
    transport.close();
  }
}

const clip = (text: string) => (text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL - 1)}…` : text);
