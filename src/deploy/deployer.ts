import type { DeployResult } from "./events.ts";
import { DeployLog } from "./log.ts";
import { prune, runDeploy, type DeployOptions } from "./pipeline.ts";
import { DeployQueue, QueueFullError, queueKey } from "./queue.ts";
import { Redaction } from "./redact.ts";
import { outboundSink } from "../notify/sink.ts";
import { markQueued, unmarkQueued } from "./waiting.ts";

/** A deploy that never ran: the queue was cancelled (the service is shutting down). Its logs say so. */
export function recordCancelled(options: DeployOptions, reason: string): Promise<DeployResult> {
  return recordNotRun(options, `cancelled before it started: ${reason}`, `cancelled: ${reason}`, "cancelled");
}

/** A deploy that could not start: its result, stream and logs end with `text` and `error`, ok=false. */
async function recordNotRun(options: DeployOptions, text: string, error: string, status: "cancelled" | "done"): Promise<DeployResult> {
  const id = options.id ?? crypto.randomUUID();
  const startedAt = new Date();
  const { config } = options;
  const redaction = new Redaction(options.secrets ?? []);
  const runScript = redaction.text(config.runScript);
  const log = new DeployLog(options.cwd, { id, startedAt, trigger: options.trigger, repoPath: config.repoPath, runScript, app: options.app });
  const env = options.env ?? process.env;
  const outbound = outboundSink({ ...options, id, repoPath: config.repoPath, env, log, secrets: options.secrets ?? [], cancelled: status === "cancelled" });
  const result: DeployResult = {
    id,
    ok: false,
    pull: { success: false, stdout: "", stderr: "", before: null, after: null },
    run: { stdout: "", stderr: "", exitCode: null, timedOut: false, script: runScript },
    error: redaction.text(error),
    log: { id, json: log.jsonPath, log: log.logPath },
    startedAt: startedAt.toISOString(),
    finishedAt: startedAt.toISOString(),
    durationMs: 0,
  };
  for (const event of [{ type: "step", step: "deploy", text: redaction.text(text) }, { type: "done", result }] as const) {
    log.write(event);
    outbound?.(event);
    try {
      options.sink?.(event);
    } catch {}
  }
  log.finish(result, status);
  prune(options);
  return result;
}

/** Queues deploys per repoPath (FIFO, across processes) and runs them. */
export class Deployer {
  readonly queue = new DeployQueue();

  /** Throws QueueFullError when the repository's queue is full; nothing runs then. */
  deploy(options: DeployOptions): Promise<DeployResult> {
    const key = queueKey(options.config.repoPath);
    try {
      // An acknowledged deploy's id is known before it starts: while it waits, `service logs <id>` says so. The
      // mark goes once the deploy's log files exist (runDeploy creates them before its first await), so a reader
      // finds the one or the other.
      const { id } = options;
      const done = <T>(result: T) => {
        if (id) unmarkQueued(options.cwd, id);
        return result;
      };
      return this.queue.run(key, () => done(runDeploy(options)), {
        limit: options.config.queueLimit,
        onQueued: (position) => {
          if (id) markQueued(options.cwd, { id, app: options.app, trigger: options.trigger, repoPath: options.config.repoPath });
          options.sink?.({ type: "queued", position });
        },
        onCancel: (reason) => done(recordCancelled(options, reason)),
      });
    } catch (error) {
      if (error instanceof QueueFullError) throw error;
      // No ticket, no turn: running anyway could overlap another deploy of the repository. The user's usual
      // cause is a service user that may not write the repository, which `git pull` needs as well.
      const why = `cannot join the deploy queue of ${key}: ${(error as Error).message}`;
      const hint = (error as NodeJS.ErrnoException).code === "EACCES" ? " (the service's user must be able to write the repository, as git pull must)" : "";
      return recordNotRun(options, `not started: ${why}${hint}`, why, "done");
    }
  }

  /** Ends every waiting deploy with a cancellation (logged); running deploys go on. */
  cancelWaiting(reason: string): void {
    this.queue.cancelWaiting(reason);
  }
}
