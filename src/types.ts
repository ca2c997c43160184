/** What a deploy produced; the JSON response with `?format=json`, and the core of the JSON log file. */
export interface DeployResult {
  /** The deploy id (a UUID), also in `log.id`. */
  id: string;
  /** True only when the run script exited 0 and the pull did not fail (with rollback: when the redeploy succeeded). */
  ok: boolean;
  pull: PullResult;
  run: RunResult;
  /** null on a normal run; otherwise what went wrong (the pull failed, the script could not start, timed out). */
  error: string | null;
  /** Present when a rollback took place. */
  rollback?: RollbackResult;
  /**
   * True when the pulled commit was taken back (the reset to the pre-pull commit succeeded), whatever the
   * redeploy did: `ok` may be true while what was pushed is not live.
   */
  rolledBack: boolean;
  /** Present when a health check ran (healthCheckUrl or healthCheck set, and the run script exited 0). */
  healthCheck?: HealthCheckResult;
  /** A `service rollback`: the commit it went back to, and the deploy that had left it checked out (if one did). */
  target?: RollbackTarget;
  /** The deploy id and the paths of its two log files. */
  log: { id: string; json: string; log: string };
  startedAt: string;
  finishedAt: string;
  durationMs: number;
}

export interface PullResult {
  success: boolean;
  stdout: string;
  stderr: string;
  /** HEAD before the pull; null when there was none (not a repository, empty repository). */
  before: string | null;
  /** HEAD after the pull. */
  after: string | null;
}

export interface RunResult {
  stdout: string;
  stderr: string;
  /** Exit code of the script (of its failing line); null when it could not be started. */
  exitCode: number | null;
  /** True when runTimeoutMs ran out and the script's process tree was killed. */
  timedOut: boolean;
  /** The script that ran (after the post-pull config reload). */
  script: string;
}

export interface RollbackResult {
  /** The commit reset to (HEAD before the pull). */
  to: string;
  /** The commit rolled back from (HEAD after the pull). */
  from: string | null;
  /** True when the reset and the redeploy both succeeded. */
  ok: boolean;
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  error: string | null;
  /** Present when the redeploy of the previous commit was health-checked. */
  healthCheck?: HealthCheckResult;
}

/** The health check of a deploy (README "Health check"). */
export interface HealthCheckResult {
  ok: boolean;
  attempts: number;
  durationMs: number;
  /** null when healthy; otherwise why not (the status code, exit code, and the timeout). */
  error: string | null;
}

/** What a `service rollback` deploys. */
export interface RollbackTarget {
  /** The full commit reset to. */
  commit: string;
  /** The deploy whose commit this is; null when a commit was named directly. */
  deployId: string | null;
}

export type Trigger = "webhook" | "cli" | "api" | "rollback" | "poll";
/** `status` and `notify` lines record outbound calls (commit statuses, notifications). */
export type Step = "deploy" | "pull" | "config" | "run" | "health" | "rollback" | "log" | "status" | "notify";

export type DeployEvent =
  | { type: "queued"; position: number }
  | {
      type: "start";
      id: string;
      startedAt: Date;
      trigger: Trigger;
      repoPath: string;
      event?: string | null;
      delivery?: string | null;
    }
  /** A line the service writes about the deploy (not output of git or the script). */
  | { type: "step"; step: Step; text: string }
  | { type: "output"; step: Step; stream: "stdout" | "stderr"; data: Uint8Array }
  /** The last event; `cancelled` when a cancel (a request, a shutdown) ended the deploy. */
  | { type: "done"; result: DeployResult; cancelled?: boolean };

export type DeploySink = (event: DeployEvent) => void;

/** How a deploy that ended counts, for the metrics, the API and notifications: a rollback is not a success. */
export type Outcome = "ok" | "failed" | "rolled_back" | "cancelled";

export function outcomeOf(result: Pick<DeployResult, "ok" | "rolledBack">, cancelled = false): Outcome {
  if (cancelled) return "cancelled";
  if (result.rolledBack) return "rolled_back";
  return result.ok ? "ok" : "failed";
}

/** The final stream line, exactly as the spec writes it. */
export function doneLine(result: Pick<DeployResult, "ok" | "run" | "rollback">): string {
  const exitCode = result.rollback ? result.rollback.exitCode : result.run.exitCode;
  return `[done] ok=${result.ok} exitCode=${exitCode === null ? "null" : exitCode}`;
}

const encoder = new TextEncoder();

/**
 * Turns events into the text transcript shared by the HTTP stream, the terminal and the .log file. Output is
 * passed through byte for byte; the service's own lines always start on a line of their own.
 */
export class Transcript {
  private atLineStart = true;

  render(event: DeployEvent): Uint8Array | undefined {
    if (event.type === "output") {
      if (event.data.length === 0) return undefined;
      this.atLineStart = event.data[event.data.length - 1] === 10;
      return event.data;
    }
    return this.line(textOf(event));
  }

  /** A line of the service's own, on a line of its own. */
  line(text: string): Uint8Array {
    const prefix = this.atLineStart ? "" : "\n";
    this.atLineStart = true;
    return encoder.encode(`${prefix}${text}\n`);
  }

  get midLine(): boolean {
    return !this.atLineStart;
  }
}

function textOf(event: Exclude<DeployEvent, { type: "output" }>): string {
  switch (event.type) {
    case "queued":
      return `[queued] waiting; position=${event.position}`;
    case "start": {
      const forge = event.event ? `, event ${event.event}${event.delivery ? `, delivery ${event.delivery}` : ""}` : "";
      return `[deploy] ${event.id} started ${event.startedAt.toISOString()} (${event.trigger}${forge}) in ${event.repoPath}`;
    }
    case "step":
      return `[${event.step}] ${event.text}`;
    case "done":
      return doneLine(event.result);
  }
}
