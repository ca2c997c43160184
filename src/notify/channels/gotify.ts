/**
 * Gotify: `POST {url}/message` with the application's token in the `X-Gotify-Key` header; the message as plain
 * text (`extras.client::display.contentType`), a title, and a priority (8 for a failed deploy, else 5).
 */
import type { NotifyTarget } from "../../config/schema-notify.ts";
import type { OutboundRequest } from "../outbound.ts";
import { messageText, type NotifyPayload } from "../payloads.ts";
import { asText, headline } from "./template.ts";
import { JSON_HEADERS } from "./webhooks.ts";

export function gotifyRequest(target: NotifyTarget, payload: NotifyPayload, token: string): OutboundRequest {
  const bad = payload.outcome === "failed" || payload.outcome === "rolled_back";
  return {
    url: `${target.url}/message`,
    headers: { ...JSON_HEADERS, ...(target.headers ?? {}), "x-gotify-key": token },
    body: JSON.stringify({
      title: `deploy ${payload.app ? `${payload.app} ` : ""}${payload.outcome.replace("_", " ")}`,
      message: messageText(payload, false, Infinity, headline(target.template, payload, asText)),
      priority: bad ? 8 : 5,
      extras: { "client::display": { contentType: "text/plain" } },
    }),
  };
}
