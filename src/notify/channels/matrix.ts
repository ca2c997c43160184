/**
 * Matrix: a message event of the client-server API, `PUT {url}/_matrix/client/v3/rooms/{roomId}/send/
 * m.room.message/{txnId}` with the access token as a Bearer token. The message is an `m.notice` (what bots send:
 * other bots do not answer it) with a plain `body` and the HTML `formatted_body`. The transaction id is made once
 * per message, so a retried call is the same message: the homeserver does not post it twice.
 */
import { randomUUID } from "node:crypto";
import type { NotifyTarget } from "../../config/schema-notify.ts";
import type { OutboundRequest } from "../outbound.ts";
import type { NotifyPayload } from "../payloads.ts";
import { htmlMessage, plainMessage } from "./html.ts";
import { JSON_HEADERS } from "./webhooks.ts";

export function matrixRequest(target: NotifyTarget, payload: NotifyPayload, token: string): OutboundRequest {
  const room = encodeURIComponent(target.roomId ?? "");
  return {
    method: "PUT",
    url: `${target.url}/_matrix/client/v3/rooms/${room}/send/m.room.message/service-${randomUUID()}`,
    headers: { ...JSON_HEADERS, ...(target.headers ?? {}), authorization: `Bearer ${token}` },
    body: JSON.stringify({
      msgtype: "m.notice",
      body: plainMessage(payload, target.template),
      format: "org.matrix.custom.html",
      formatted_body: htmlMessage(payload, target.template).replace(/\n(?![^<]*<\/pre>)/g, "<br>"),
    }),
  };
}
