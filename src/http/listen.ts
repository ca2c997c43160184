/**
 * The webhook port (docs/http.md): the routes of the webhook handler and nothing else, with the bounds every
 * request gets whatever the handler does (an idle timeout, a body backstop, the connection bound).
 */
import { runtime } from "#runtime";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import type { Listener } from "../runtime/types.ts";
import { boundedPort } from "../system/address.ts";
import { jsonResponse } from "./response.ts";
import { type WebhookContext, webhookHandler } from "./webhook.ts";

/** Bun's own request body limit: see `maxRequestBodySize` below. */
const BODY_BACKSTOP_BYTES = 4 * 1024 ** 3;

/** Idle connections are closed after this; authorized deploy streams are exempt (they send heartbeats instead). */
const IDLE_TIMEOUT_SECONDS = 30;

/** Listens on the webhook port of `initial`, each request answered by the webhook handler of `context`. */
export function listenForWebhooks(initial: ResolvedConfig, context: WebhookContext): Promise<Listener> {
  const { logger } = context;
  return runtime.serve({
    port: initial.port,
    hostname: initial.hostname,
    bounded: boundedPort(initial.hostname, initial.boundConnections),
    idleTimeoutSeconds: IDLE_TIMEOUT_SECONDS,
    // Only a backstop: readBody (body.ts) enforces each app's limit, and answers in JSON naming it. Bun answers a
    // body over this itself (an empty 413, before the handler runs), so it sits far above any app's limit,
    // and above limits raised by a config reload. An unread body is not buffered (Bun applies backpressure).
    maxRequestBodySize: Math.max(
      BODY_BACKSTOP_BYTES,
      initial.maxBodyBytes + 1,
      ...initial.apps.map((a) => (a.maxBodyBytes ?? 0) + 1),
    ),
    fetch: webhookHandler(context),
    error(error) {
      logger.error(`request failed: ${error.message}`);
      return jsonResponse(500, {
        error: "internal error",
        message: "the request failed inside the service; see its log",
      });
    },
  });
}
