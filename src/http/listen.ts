/**
 * The webhook port (docs/http.md): the routes of the webhook handler and nothing else, with the bounds every
 * request gets whatever the handler does (an idle timeout, a body backstop, the connection bound). The port opens
 * before what answers on it has loaded (the serve command opens it once the configuration is read): a request that
 * comes meanwhile waits for the handler, which is given once the kept requests are recovered.
 */
import { runtime } from "#runtime";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import type { Listener, ServeOptions } from "../runtime/types.ts";
import { boundedPort } from "../system/address.ts";
import type { Logger } from "../system/logger.ts";
import { jsonResponse } from "./json.ts";

/** Bun's own request body limit: see `maxRequestBodySize` below. */
const BODY_BACKSTOP_BYTES = 4 * 1024 ** 3;

/** Idle connections are closed after this; authorized deploy streams are exempt (they send heartbeats instead). */
const IDLE_TIMEOUT_SECONDS = 30;

type Answer = ServeOptions["fetch"];

/** An open webhook port. Its listener's `stop` answers the requests still waiting (503) and closes it, once. */
export interface WebhookPort {
  readonly listener: Listener;
  /** From now on each request is answered by `answer`, those waiting for it first. */
  answerWith(answer: Answer): void;
}

/** Answers a request that came to a port whose server did not start (it closes next). */
const notStarted: Answer = () =>
  jsonResponse(503, { error: "unavailable", message: "the service did not start; see its log" });

/** Listens on the webhook port of `initial`; each request waits for `answerWith`. */
export async function openWebhookPort(initial: ResolvedConfig, logger: Logger): Promise<WebhookPort> {
  let answer: Answer | undefined;
  let given!: (answer: Answer) => void;
  const answered = new Promise<Answer>((resolve) => {
    given = resolve;
  });
  const wait: Answer = async (request, control) => (await answered)(request, control);
  const listener = await runtime.serve({
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
    fetch: (request, control) => (answer ?? wait)(request, control),
    error(error) {
      logger.error(`request failed: ${error.message}`);
      return jsonResponse(500, {
        error: "internal error",
        message: "the request failed inside the service; see its log",
      });
    },
  });
  const answerWith = (next: Answer) => {
    answer ??= next;
    given(answer);
  };
  let stopped: Promise<void> | undefined;
  return {
    listener: {
      port: listener.port,
      stop: () => {
        answerWith(notStarted);
        stopped ??= listener.stop();
        return stopped;
      },
    },
    answerWith,
  };
}
