/** The HTML message of Telegram and Matrix: the first line, the link, the last lines of output in a <pre>. */
import { messageText, type NotifyPayload } from "../payloads.ts";
import { escapeHtml, headline } from "./template.ts";

/** The message as HTML, at most `max` characters (the oldest lines of output left out first). */
export function htmlMessage(payload: NotifyPayload, template: string | undefined, max = Infinity): string {
  const line = headline(template, payload, escapeHtml);
  const head = `${line}${payload.targetUrl ? `\n${escapeHtml(payload.targetUrl)}` : ""}`;
  const lines = payload.output.map(escapeHtml);
  // Bounded: each round drops one line.
  while (lines.length > 0) {
    const text = `${head}\n<pre>${lines.join("\n")}</pre>`;
    if (text.length <= max) return text;
    lines.shift();
  }
  return head.slice(0, max);
}

/** The same message as plain text (Matrix's `body`, for clients that show no HTML). */
export function plainMessage(payload: NotifyPayload, template: string | undefined): string {
  return messageText(
    payload,
    false,
    Infinity,
    headline(template, payload, (text) => text),
  );
}
