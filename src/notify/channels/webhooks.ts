/**
 * The webhook formats: the JSON payload to an endpoint of the user's, Slack and Discord incoming webhooks, ntfy.
 */
import type { NotifyTarget } from "../../config/schema-notify.ts";
import type { OutboundRequest } from "../outbound.ts";
import { messageText, type NotifyPayload } from "../payloads.ts";
import { asText, escapeSlack, headline } from "./template.ts";

/** Discord refuses a `content` over 2000 characters. */
const DISCORD_MAX = 2000;

export const JSON_HEADERS = { "content-type": "application/json" };

/** The request of one target; `headers` of the entry come last, so the user's auth header is sent as written. */
export function webhookRequest(
  target: NotifyTarget & { format?: "json" | "slack" | "discord" | "ntfy" },
  payload: NotifyPayload,
): OutboundRequest {
  const own = target.headers ?? {};
  switch (target.format ?? "json") {
    case "json":
      return { url: target.url, headers: { ...JSON_HEADERS, ...own }, body: JSON.stringify(payload) };
    case "slack": {
      // Slack reads <…> as links and mentions: output is shown as text.
      const line = headline(target.template, payload, escapeSlack);
      return {
        url: target.url,
        headers: { ...JSON_HEADERS, ...own },
        body: JSON.stringify({ text: messageText(payload, true, Infinity, line, escapeSlack) }),
      };
    }
    case "discord": {
      // A deploy's output must not ping anyone (`@everyone` in a log line).
      const content = messageText(payload, true, DISCORD_MAX, headline(target.template, payload, asText));
      return {
        url: target.url,
        headers: { ...JSON_HEADERS, ...own },
        body: JSON.stringify({ content, allowed_mentions: { parse: [] } }),
      };
    }
    case "ntfy": {
      const bad = payload.outcome === "failed" || payload.outcome === "rolled_back";
      const tags = {
        started: "rocket",
        succeeded: "white_check_mark",
        failed: "x",
        rolled_back: "rewind",
        cancelled: "no_entry",
        refused: "no_entry_sign",
        superseded: "fast_forward",
      }[payload.outcome];
      // Header values are ASCII: the title stays plain.
      const title = `deploy ${payload.app ?? ""} ${payload.outcome.replace("_", " ")}`
        .replace(/\s+/g, " ")
        .replace(/[^\x20-\x7e]/g, "?");
      return {
        url: target.url,
        headers: {
          "content-type": "text/plain; charset=utf-8",
          title,
          priority: bad ? "high" : "default",
          tags,
          ...own,
        },
        body: messageText(payload, false, Infinity, headline(target.template, payload, asText)),
      };
    }
  }
}
