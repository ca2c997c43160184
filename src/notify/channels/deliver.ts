/**
 * One notification to one `notify` entry, whatever its format: the request of a webhook format or an HTTP API
 * (Telegram, Teams, Matrix, Gotify) through the outbound calls, or an email (its code loaded at the first one).
 * The secret files are read at each call: what they say now. Never throws: a problem is a failed answer.
 */
import { channelSecret } from "../../config/channels.ts";
import { DEFAULT_OUTBOUND_TIMEOUT_MS, type NotifyTarget } from "../../config/schema-notify.ts";
import type { OutboundAnswer, OutboundCalls } from "../outbound.ts";
import type { NotifyPayload } from "../payloads.ts";
import { gotifyRequest } from "./gotify.ts";
import { matrixRequest } from "./matrix.ts";
import { teamsRequest } from "./teams.ts";
import { telegramRequest } from "./telegram.ts";
import { webhookRequest } from "./webhooks.ts";

export async function deliver(
  calls: OutboundCalls,
  target: NotifyTarget,
  payload: NotifyPayload,
  cwd: string,
): Promise<OutboundAnswer> {
  const options = { timeoutMs: target.timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS };
  const format = target.format ?? "json";
  switch (format) {
    case "json":
    case "slack":
    case "discord":
    case "ntfy":
      return calls.send(webhookRequest({ ...target, format }, payload), options);
    case "teams":
      return calls.send(teamsRequest(target, payload), options);
    case "email": {
      const password = target.passwordFile ? channelSecret(target.passwordFile, cwd, "passwordFile") : undefined;
      if (password && "problem" in password) return { ok: false, detail: password.problem, tries: 0 };
      try {
        const { sendEmail } = await import("./email.ts");
        return await calls.sendBy(
          (stop, n) => sendEmail(target, payload, password?.secret, cwd, options.timeoutMs, stop, n),
          options,
        );
      } catch (error) {
        return { ok: false, detail: `cannot send email: ${(error as Error).message}`, tries: 0 };
      }
    }
    default: {
      const token = channelSecret(target.tokenFile ?? "", cwd, "tokenFile");
      if ("problem" in token) return { ok: false, detail: token.problem, tries: 0 };
      const build = { telegram: telegramRequest, matrix: matrixRequest, gotify: gotifyRequest }[format];
      return calls.send(build(target, payload, token.secret), options);
    }
  }
}

/**
 * How logs and pages name an entry: by format (the URL may be a credential), numbered when several share one;
 * an email by its recipients.
 */
export function channelLabel(target: NotifyTarget, targets: NotifyTarget[]): string {
  const format = target.format ?? "json";
  if (format === "email") return `email to ${(target.to ?? []).join(", ")}`;
  return targets.filter((other) => (other.format ?? "json") === format).length > 1
    ? `${format}#${targets.indexOf(target) + 1}`
    : format;
}
