/**
 * Notifications: what a deploy's outcome is, the JSON payload, and the message of each format (Slack and
 * Discord incoming webhooks, ntfy, the user's own endpoint).
 */
import { outcomeOf } from "../history/record.ts";
import type { CommitInfo, DeployResult, ForgeDelivery, Trigger, Unrun } from "../types.ts";
import type { WatchResult } from "../watch-types.ts";
import type { NotifyEvent } from "../config/schema-notify.ts";

/** Lines of output a notification carries. */
export const TAIL_LINES = 20;

/**
 * What a finished deploy counts as for `on`: the deploy's outcome, where `ok` is called `succeeded`. The one place
 * a deploy's end becomes an event: a deploy that ends refused or superseded maps to `refused` / `superseded` here
 * (their messages are built below: the refused commit and the reason).
 */
export function notifyOutcome(
  result: DeployResult,
  cancelled: boolean,
  unrun?: Unrun,
): Exclude<NotifyEvent, "started"> {
  const outcome = outcomeOf(result, cancelled, unrun);
  return outcome === "ok" ? "succeeded" : outcome;
}

/** The JSON payload (format `json`), documented in the README. */
export interface NotifyPayload {
  id: string;
  app: string | null;
  trigger: Trigger;
  /** Who started it (docs/log-files.md "Who deployed what"). */
  actor: string | null;
  /** A deploy of a ref: the ref as named; null otherwise. */
  ref: string | null;
  /** It went past a pause (`--force`, `force: true`). */
  forced: boolean;
  event: string | null;
  delivery: string | null;
  /** The commits before and after; `subject`, `author` and `date` are the `after` commit's (null when unknown). */
  commit: {
    before: string | null;
    after: string | null;
    subject: string | null;
    author: string | null;
    date: string | null;
  };
  /** The commit the deploy tried, in words (the record's `target`); null before it ends, or when it tried none. */
  target: CommitInfo | null;
  outcome: NotifyEvent;
  /** null while the deploy has not ended (`started`). */
  ok: boolean | null;
  rolledBack: boolean;
  exitCode: number | null;
  durationMs: number | null;
  error: string | null;
  rollback: { to: string; from: string | null; ok: boolean; exitCode: number | null; error: string | null } | null;
  /** The last lines of the deploy's transcript, secrets redacted. */
  output: string[];
  targetUrl: string | null;
  /** True for a test notification (`service notify test`, `service check --send-test`). */
  test?: boolean;
  /** A deploy of a tag (a ref or a rollback that named one): the tag. Absent otherwise. */
  tag?: string;
  /** With `watch` (docs/watch.md): how the watch after the health check ended. Absent otherwise. */
  watch?: WatchResult;
}

export interface PayloadInput {
  id: string;
  app?: string;
  trigger: Trigger;
  actor?: string | null;
  ref?: string;
  forced?: boolean;
  outcome: NotifyEvent;
  result?: DeployResult;
  commit?: { before: string | null; after: string | null; info?: CommitInfo | null };
  output: string[];
  targetUrl?: string;
  /** The forge's event and delivery id of a webhook deploy. */
  forge?: ForgeDelivery;
  /** Why a deploy was refused or superseded (the payload's `error`). */
  reason?: string;
}

export function notifyPayload(input: PayloadInput): NotifyPayload {
  const { result } = input;
  // As the `[done]` line says it: after a rollback, the redeploy's exit code.
  const exitCode = result ? (result.rollback ? result.rollback.exitCode : result.run.exitCode) : null;
  const commits = result ? { before: result.pull.before, after: result.pull.after } : input.commit;
  // The words of the commit named `after` (after a rollback the result's commit is the one gone back to).
  const info = [result?.target, result?.commit, input.commit?.info].find((c) => c && c.sha === commits?.after) ?? null;
  const target = result?.target ?? null;
  return {
    id: input.id,
    app: input.app ?? null,
    trigger: input.trigger,
    actor: input.actor ?? null,
    ref: input.ref ?? null,
    forced: input.forced === true,
    event: input.forge?.event ?? null,
    delivery: input.forge?.delivery ?? null,
    commit: {
      before: commits?.before ?? null,
      after: commits?.after ?? null,
      subject: info?.subject ?? null,
      author: info?.author ?? null,
      date: info?.date ?? null,
    },
    target: target && { sha: target.sha, subject: target.subject, author: target.author, date: target.date },
    outcome: input.outcome,
    ok: result ? result.ok : null,
    rolledBack: result ? result.rolledBack : false,
    exitCode,
    durationMs: result ? result.durationMs : null,
    error: (result ? result.error : null) ?? input.reason ?? null,
    rollback: result?.rollback
      ? {
          to: result.rollback.to,
          from: result.rollback.from,
          ok: result.rollback.ok,
          exitCode: result.rollback.exitCode,
          error: result.rollback.error,
        }
      : null,
    output: input.output,
    targetUrl: input.targetUrl ?? null,
    ...(result?.target?.tag ? { tag: result.target.tag } : {}),
    ...(result?.watch ? { watch: result.watch } : {}),
  };
}

const short = (commit: string | null) => (commit ? commit.slice(0, 7) : "?");

/** What an ok deploy's watch adds to its summary: a breach not rolled back, a watch not finished. */
function watchWords(watch: WatchResult | undefined): string {
  if (!watch) return "";
  if (watch.breach) {
    const seen =
      watch.value === null ? (watch.reason ?? "no value") : `value ${watch.value}, threshold ${watch.threshold}`;
    return `, but its watch BREACHED (${seen}; not rolled back)`;
  }
  if (watch.interrupted) return "; its watch was not finished (the service stopped)";
  if (watch.cancelled) return "; its watch was ended by a cancel";
  return "";
}

/** Longest commit subject the one-line summary carries. */
const SUMMARY_SUBJECT = 72;

/** One line a person reads: what, where, which commit, who asked, how it ended. */
export function summary(payload: NotifyPayload): string {
  const what = `${payload.test ? "Test notification: " : ""}deploy ${payload.app ? `of ${payload.app} ` : ""}`;
  const { after, subject } = payload.commit;
  const quote = (words: string | null) =>
    words ? ` "${words.length > SUMMARY_SUBJECT ? `${words.slice(0, SUMMARY_SUBJECT - 1)}…` : words}"` : "";
  const words = quote(subject);
  const commit = after ? ` at ${short(after)}${words}` : "";
  const took = payload.durationMs !== null ? ` in ${(payload.durationMs / 1000).toFixed(1)} s` : "";
  const by = payload.actor ? `, by ${payload.actor}` : "";
  switch (payload.outcome) {
    case "started":
      return `${what}started${commit} (${payload.trigger}${by})`;
    case "succeeded":
      return `${what}succeeded${commit}${took}${by}${watchWords(payload.watch)}`;
    case "failed":
      return `${what}FAILED${commit}${took}${by}${payload.error ? `: ${payload.error}` : ` (exit code ${payload.exitCode})`}`;
    case "rolled_back":
      return `${what}FAILED${commit}${by}${payload.watch?.breach ? `: ${payload.error}` : ""} and was rolled back to ${short(payload.rollback?.to ?? null)}${payload.rollback?.ok ? "" : " (the rollback failed too)"}`;
    case "cancelled":
      return `${what}cancelled${by}${payload.error ? `: ${payload.error}` : ""}`;
    case "refused": {
      // The commit it refused: the one it tried, else the one named.
      const refused = payload.target ?? { sha: after, subject };
      const why = payload.error ? `: ${payload.error}` : "";
      return `${what}refused commit ${short(refused.sha)}${quote(refused.subject)}${by}${why}`;
    }
    case "superseded":
      return `${what}superseded${commit}${by}${payload.error ? `: ${payload.error}` : ""}`;
  }
}

/**
 * The message text of chat formats: the summary (or `line`, the entry's template filled in), the link, and the last
 * lines of output; `shown` is applied to what comes from the deploy (`line` comes escaped already).
 */
export function messageText(
  payload: NotifyPayload,
  fence: boolean,
  max = Infinity,
  line?: string,
  shown: (text: string) => string = (text) => text,
): string {
  const head = `${line ?? shown(summary(payload))}${payload.targetUrl ? `\n${shown(payload.targetUrl)}` : ""}`;
  if (payload.output.length === 0) return head.slice(0, max);
  const open = fence ? "\n```\n" : "\n\n";
  const close = fence ? "\n```" : "";
  const lines = payload.output.map(shown);
  // Drop the oldest lines until it fits: the last ones say why a deploy failed.
  let text = `${head}${open}${lines.join("\n")}${close}`;
  while (text.length > max && lines.length > 0) {
    lines.shift();
    text = `${head}${open}${lines.join("\n")}${close}`;
  }
  return text.length > max ? head.slice(0, max) : text;
}

/** The bounded tail of a transcript: the last TAIL_LINES lines, each cut to a readable length. */
export class Tail {
  private lines: string[] = [];
  private partial = "";
  private readonly decoder = new TextDecoder();

  add(data: Uint8Array | string): void {
    const text = this.partial + (typeof data === "string" ? data : this.decoder.decode(data, { stream: true }));
    const parts = text.split(/\r?\n|\r/);
    this.partial = (parts.pop() ?? "").slice(-1000);
    for (const line of parts) this.push(line);
  }

  private push(line: string): void {
    this.lines.push(line.length > 300 ? `${line.slice(0, 299)}…` : line);
    if (this.lines.length > TAIL_LINES) this.lines.shift();
  }

  /** The lines so far, the unfinished one included. */
  get(): string[] {
    const out = this.partial ? [...this.lines, this.partial.slice(0, 300)] : [...this.lines];
    return out.slice(-TAIL_LINES);
  }
}
