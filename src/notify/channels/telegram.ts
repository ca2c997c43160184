/**
 * Telegram: the Bot API's `sendMessage` (`POST {url}/bot<token>/sendMessage`), the message as HTML
 * (`parse_mode: HTML`: every value escaped, the output in a <pre>), to the chat `chatId`.
 */
import type { NotifyTarget } from "../../config/schema-notify.ts";
import type { OutboundRequest } from "../outbound.ts";
import type { NotifyPayload } from "../payloads.ts";
import { htmlMessage } from "./html.ts";
import { JSON_HEADERS } from "./webhooks.ts";

/** Telegram refuses a text over 4096 characters. */
const TELEGRAM_MAX = 4096;

export function telegramRequest(target: NotifyTarget, payload: NotifyPayload, token: string): OutboundRequest {
  return {
    url: `${target.url}/bot${token}/sendMessage`,
    headers: { ...JSON_HEADERS, ...(target.headers ?? {}) },
    body: JSON.stringify({
      chat_id: target.chatId,
      text: htmlMessage(payload, target.template, TELEGRAM_MAX),
      parse_mode: "HTML",
      link_preview_options: { is_disabled: true },
    }),
  };
}
