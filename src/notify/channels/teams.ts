/**
 * Microsoft Teams: a Workflows webhook ("Send webhook alerts to a channel"), `POST {url}` of a message with one
 * Adaptive Card attachment: the first line in bold, the link as a button, the last lines of output in monospace.
 */
import type { NotifyTarget } from "../../config/schema-notify.ts";
import type { OutboundRequest } from "../outbound.ts";
import type { NotifyPayload } from "../payloads.ts";
import { asText, headline } from "./template.ts";
import { JSON_HEADERS } from "./webhooks.ts";

export function teamsRequest(target: NotifyTarget, payload: NotifyPayload): OutboundRequest {
  const bad = payload.outcome === "failed" || payload.outcome === "rolled_back" || payload.outcome === "refused";
  const body: object[] = [
    {
      type: "TextBlock",
      text: headline(target.template, payload, asText),
      wrap: true,
      weight: "Bolder",
      color: bad ? "Attention" : payload.outcome === "succeeded" ? "Good" : "Default",
    },
  ];
  if (payload.output.length > 0)
    body.push({
      type: "TextBlock",
      text: payload.output.join("\n\n"),
      wrap: true,
      fontType: "Monospace",
      size: "Small",
    });
  const card = {
    $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
    type: "AdaptiveCard",
    version: "1.4",
    body,
    ...(payload.targetUrl
      ? { actions: [{ type: "Action.OpenUrl", title: "Open the deploy", url: payload.targetUrl }] }
      : {}),
  };
  return {
    url: target.url,
    headers: { ...JSON_HEADERS, ...(target.headers ?? {}) },
    body: JSON.stringify({
      type: "message",
      attachments: [{ contentType: "application/vnd.microsoft.card.adaptive", contentUrl: null, content: card }],
    }),
  };
}
