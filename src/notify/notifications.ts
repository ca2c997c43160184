/**
 * The notifications of one deploy: for an event (`started`, then how it ended), the payload built once, redacted,
 * and sent to each `notify` entry whose `on` names the event. Each outcome is recorded in the deploy's log and
 * record (the deploy's page shows it) and told to the owner of the calls (counted, logged): a notification that
 * fails is never silent, and never holds or fails the deploy.
 */
import type { OutboundDeploy } from "../deploy/types.ts";
import type { CommitInfo, DeployResult } from "../types.ts";
import type { Redaction } from "../system/redact.ts";
import { DEFAULT_ON, type NotifyEvent } from "../config/schema-notify.ts";
import { fillTemplate } from "./commit-status.ts";
import { notifyPayload, type Tail } from "./payloads.ts";
import type { OutboundCalls } from "./outbound.ts";
import { channelLabel, deliver } from "./channels/deliver.ts";

export type Commits = { before: string | null; after: string | null; info?: CommitInfo | null };

/** Writes one outcome into the deploy's log and record. */
export type RecordOutcome = (kind: "notify", label: string, what: string, ok: boolean, detail: string) => void;

/** The function that notifies `event` of the deploy `ctx`. */
export function notifier(
  ctx: OutboundDeploy,
  calls: OutboundCalls,
  tail: Tail,
  redaction: Redaction,
  record: RecordOutcome,
) {
  const targets = ctx.config.notify ?? [];
  return (event: NotifyEvent, result?: DeployResult, commits?: Commits, reason?: string) => {
    // A watch's breach that rolled nothing back (onBreach: notify) is told to whoever wants failures (docs/watch.md).
    const breached = event === "succeeded" && result?.watch?.breach === true;
    const wanted = targets.filter(
      (t) => (t.on ?? DEFAULT_ON).includes(event) || (breached && (t.on ?? DEFAULT_ON).includes("failed")),
    );
    if (wanted.length === 0) return;
    const after = result ? result.pull.after : (commits?.after ?? null);
    const targetUrl = ctx.config.status?.targetUrl
      ? fillTemplate(ctx.config.status.targetUrl, { id: ctx.id, app: ctx.app, commit: after ?? "" })
      : undefined;
    const output = tail.get().map((line) => redaction.text(line));
    const payload = notifyPayload({
      id: ctx.id,
      app: ctx.app,
      trigger: ctx.trigger,
      actor: ctx.actor,
      ...(ctx.ref !== undefined ? { ref: ctx.ref } : {}),
      forced: ctx.forced === true,
      forge: ctx.forge,
      outcome: event,
      result,
      commit: { before: commits?.before ?? null, after, info: commits?.info ?? null },
      output,
      targetUrl,
      ...(reason !== undefined ? { reason } : {}),
    });
    // The result is redacted of the webhook secrets already; not of the outbound ones.
    if (payload.error) payload.error = redaction.text(payload.error);
    if (payload.actor) payload.actor = redaction.text(payload.actor);
    if (payload.commit.subject) payload.commit.subject = redaction.text(payload.commit.subject);
    if (payload.commit.author) payload.commit.author = redaction.text(payload.commit.author);
    if (payload.target?.subject) payload.target.subject = redaction.text(payload.target.subject);
    if (payload.rollback?.error) payload.rollback.error = redaction.text(payload.rollback.error);
    for (const target of wanted) {
      const label = channelLabel(target, targets);
      void calls.track(
        deliver(calls, target, payload, ctx.cwd).then((answer) => {
          record("notify", label, event, answer.ok, answer.detail);
          const detail = redaction.text(answer.detail);
          const format = target.format ?? "json";
          calls.notified?.({ app: ctx.app ?? "default", format, label, id: ctx.id, ok: answer.ok, detail });
        }),
      );
    }
  };
}
