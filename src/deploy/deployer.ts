import { resolve } from "node:path";
import { makeBlanks } from "../history/blanks.ts";
import { LOG_DIR } from "../history/record.ts";
import { dropRequest, storeRequest } from "../history/requests.ts";
import { requestOf } from "./request.ts";
import { Cancellation, CancelWatch } from "../queue/cancel.ts";
import { pauseOf } from "../queue/pause.ts";
import { DeployQueue, QueueFullError } from "../queue/queue.ts";
import { queueKey } from "../queue/tickets.ts";
import { defaultLogger, type Logger } from "../system/logger.ts";
import { KILL_GRACE_MS, killGroup, RunningProcesses } from "../system/process.ts";
import type { DeployResult, DeploySink, Unrun } from "../types.ts";
import { forcedText, freezeOf } from "./frozen.ts";
import { runDeploy } from "./pipeline.ts";
import { DeployRun, type Ending } from "./run.ts";
import type { DeployOptions, OutboundSinks, PlannedDeploy, RefusedDeployment } from "./types.ts";

/** A deploy that never ran: the queue was cancelled (the service is shutting down). Its logs say so. */
export function recordCancelled(options: PlannedDeploy, reason: string): Promise<DeployResult> {
  return recordNotRun(options, `cancelled before it started: ${reason}`, `cancelled: ${reason}`, "cancelled");
}

/**
 * A request that ends without running, refused or superseded (docs/deploy-control.md "Requests"): its record, under
 * its own actor and the commit it named, says why; its outbound sinks are told (a deployment set inactive).
 */
export function recordUnrun(options: PlannedDeploy, outcome: Unrun, reason: string): Promise<DeployResult> {
  return recordNotRun(options, `${outcome}: ${reason}; nothing runs`, reason, { outcome, reason });
}

/** A deploy that could not start: its result, stream and logs end with `text` and `error`, ok=false. */
async function recordNotRun(
  options: PlannedDeploy,
  text: string,
  error: string,
  ending: Ending,
): Promise<DeployResult> {
  const run = new DeployRun(options);
  run.step("deploy", text);
  const named = options.target?.commit ?? options.pushed;
  const produced = {
    ok: false,
    pull: { success: false, stdout: "", stderr: "", before: null, after: null },
    run: { stdout: "", stderr: "", exitCode: null, timedOut: false, script: options.config.runScript },
    error,
    rolledBack: false,
    commit: null,
    previousCommit: null,
    // What it named, as a refusal's record shows it: under that commit, never the live one.
    ...(named ? { target: { sha: named, subject: "", author: "", date: "", ...options.target } } : {}),
  };
  // Nothing ran: it ends the moment it starts.
  return run.end(produced, ending, run.startedAt);
}

/** The triggers an operator asks for: they deploy whatever `paths` and skip markers say. */
const OPERATOR_TRIGGERS = new Set<string>(["cli", "api", "rollback"]);

export interface DeployerOptions {
  /** Where the deploys' own warnings go, and the queue's about deploys a dead process left running. */
  logger?: Logger;
  /** Makes each deploy's outbound sink (commit statuses, notifications); the owner tracks their calls. */
  outbound?: OutboundSinks;
  /** A `service deploy` in a shell: its requests are not the server's to replay when the process dies. */
  cli?: boolean;
}

/** Queues deploys per repoPath (FIFO, across processes) and runs them. */
export class Deployer {
  readonly queue: DeployQueue;
  private readonly logger: Logger;
  private readonly outbound: OutboundSinks | undefined;
  /** The commands its deploys are running, and only those: what a shutdown or Ctrl-C stops. */
  readonly processes = new RunningProcesses();
  /** The cancel requests (`service cancel`) for this deployer's deploys. */
  private readonly cancels = new CancelWatch();
  /** Its deploys waiting at their gate (the waiting event), by id: what `stopWaits` ends. */
  private readonly waits = new Map<string, Cancellation>();

  private readonly cli: boolean;

  constructor(options: DeployerOptions = {}) {
    this.cli = options.cli ?? false;
    this.logger = options.logger ?? defaultLogger();
    this.outbound = options.outbound;
    this.queue = new DeployQueue(this.logger);
  }

  /** Throws QueueFullError when the repository's queue is full; nothing runs then. */
  deploy(requested: DeployOptions, control: { force?: boolean } = {}): Promise<DeployResult> {
    // The id is made here, once, before the queue: its ticket names it, so a process that finds it interrupted can
    // mark its log.
    // Force matters only while a pause or a freeze holds the app: then the record says it went past them.
    const pause = control.force ? pauseOf(requested.cwd, requested.app) : undefined;
    const freeze = control.force ? freezeOf(requested) : undefined;
    const forced = [
      ...(pause ? [`deploys are paused: ${pause.reason} (since ${pause.since}, by ${pause.by})`] : []),
      ...(freeze ? [forcedText(freeze)] : []),
    ].join("; ");
    const options: PlannedDeploy = {
      logger: this.logger,
      outbound: this.outbound,
      ...requested,
      ...(forced ? { forced } : {}),
      ...(control.force ? { force: true } : {}),
      // An operator's deploy of an app with `paths` deploys whatever the paths say: its record says so.
      ...(!requested.paths && requested.config.paths?.length && OPERATOR_TRIGGERS.has(requested.trigger)
        ? { paths: { forced: true as const } }
        : {}),
      requestedAt: Date.now(),
      id: requested.id ?? crypto.randomUUID(),
    };
    const key = queueKey(options.config.repoPath);
    try {
      // The request is on the disk before it is answered (the caller answers once this returns): as its deploy's
      // log files when the deploy starts at once (runDeploy and recordNotRun create them before their first await),
      // else as a request file until they exist. A reader finds the one or the other. Its file goes once they exist,
      // as does the file of a kept request a catch-up or a replay deploys under its own id.
      const { id } = options;
      let logged = false;
      const keep = () => {
        if (logged) return;
        const unkept = storeRequest(options.cwd, requestOf(options, this.cli));
        if (unkept)
          this.logger.warn(`deploy ${id}: its request could not be kept (${unkept}): a crash now would lose it`);
      };
      const onLogged = () => {
        logged = true;
        dropRequest(options.cwd, id);
      };
      const logs = resolve(options.cwd, LOG_DIR);
      const cancellation = new Cancellation();
      const sink = this.waitingOf(id, cancellation, options.sink);
      // The result goes to the caller with the `[done]` line; what follows it (pruning releases) keeps the turn.
      let ended: (result: DeployResult) => void = () => {};
      const early = new Promise<DeployResult>((resolve) => (ended = resolve));
      const stopping = this.stopping.signal;
      const planned: PlannedDeploy = {
        ...options,
        cancellation,
        ...(sink ? { sink } : {}),
        ended,
        stopping,
        logged: onLogged,
      };
      const task = () => this.running(cancellation, () => runDeploy(planned));
      const result = this.queue.run(key, task, {
        limit: options.config.queueLimit,
        deploy: { id, logs },
        onQueued: (position) => {
          options.sink?.({ type: "queued", position });
          // Its forge deployment (a deployment event's, or the one the service creates) says `queued` while it waits.
          options.outbound?.queued?.({
            id,
            app: options.app,
            trigger: options.trigger,
            ...(options.target ? { commit: options.target.commit } : {}),
            cwd: options.cwd,
            repoPath: options.config.repoPath,
            config: options.config,
            env: options.env ?? process.env,
            ...(options.deployment ? { deployment: options.deployment } : {}),
          });
        },
        held: control.force ? undefined : () => pauseOf(options.cwd, options.app) !== undefined,
        onCancel: (reason) => recordCancelled(planned, reason),
        onRefused: (reason) => recordNotRun(planned, `not started: ${reason}`, reason, "done"),
      });
      keep();
      // Watched once queued (a full queue throws above): a request taken while it waits ends it in the queue.
      const unwatch = this.cancels.watch(options.cwd, id, (by, mark) => {
        // Marked first: a deploy that still waits is ended right away, and its record says who cancelled it.
        cancellation.mark = mark;
        if (!this.queue.cancelOne(id, by)) cancellation.cancel(by, mark);
      });
      void result.finally(unwatch).catch(() => {});
      const answer = Promise.race([early, result]);
      // The server's next deploy finds its log files made (history/blanks.ts): made once this one's answer is out.
      if (!this.cli) void answer.then(() => setTimeout(() => makeBlanks(logs), 0)).catch(() => {});
      return answer;
    } catch (error) {
      dropRequest(options.cwd, options.id);
      if (error instanceof QueueFullError) throw error;
      // No ticket, no turn: running anyway could overlap another deploy of the repository. The user's usual
      // cause is a service user that may not write the repository, which `git pull` needs as well.
      const why = `cannot join the deploy queue of ${key}: ${(error as Error).message}`;
      const hint =
        (error as NodeJS.ErrnoException).code === "EACCES"
          ? " (the service's user must be able to write the repository, as git pull must)"
          : "";
      return recordNotRun(options, `not started: ${why}${hint}`, why, "done");
    }
  }

  /**
   * Runs one deploy with its own set of commands, so a cancel stops its commands and no other deploy's: TERM
   * to those running when the cancel comes, KILL after a grace to those of them still running.
   */
  private running<T>(cancellation: Cancellation, task: () => Promise<T>): Promise<T> {
    const own = new RunningProcesses(this.processes);
    const promise = own.own(task);
    let killer: ReturnType<typeof setTimeout> | undefined;
    cancellation.onCancel(() => {
      const stopped = own.running();
      own.signal("SIGTERM");
      killer = setTimeout(() => {
        for (const pid of stopped) if (own.has(pid)) killGroup(pid, "SIGKILL");
      }, KILL_GRACE_MS);
    });
    return promise.finally(() => clearTimeout(killer));
  }

  /** `sink`, noting whether the deploy `id` waits at its gate; a deploy without a sink has no one to stop it so. */
  private waitingOf(id: string, cancellation: Cancellation, sink: DeploySink | undefined): DeploySink | undefined {
    if (!sink) return undefined;
    return (event) => {
      if (event.type === "waiting") {
        if (event.for === null) this.waits.delete(id);
        else this.waits.set(id, cancellation);
      } else if (event.type === "done") this.waits.delete(id);
      sink(event);
    };
  }

  /**
   * Cancels the deploys that wait at their gate (a Ctrl-C of `service deploy`): no command of theirs runs that a
   * signal could stop, and a wait of up to `gate.waitMs` must not outlast the one who asked to stop it.
   */
  stopWaits(by: string): void {
    for (const cancellation of this.waits.values()) cancellation.cancel(by);
  }

  /** Aborted by endWatches: the running deploys' watches end, not finished. */
  private stopping = new AbortController();

  /** A stop of the service: the running deploys' watches end now, what is live stays (docs/watch.md). */
  endWatches(): void {
    this.stopping.abort();
  }

  /** A start after a stop: the deploys from now on watch to the end again. */
  resumeWatches(): void {
    if (this.stopping.signal.aborted) this.stopping = new AbortController();
  }

  /** Ends every waiting deploy with a cancellation (logged); running deploys go on. */
  cancelWaiting(reason: string): void {
    this.queue.cancelWaiting(reason);
  }

  /** Records a request that ends without running (refused, superseded, cancelled), with its outbound sinks told. */
  recordUnrun(requested: DeployOptions, outcome: Unrun | "cancelled", reason: string): Promise<DeployResult> {
    const options: PlannedDeploy = {
      logger: this.logger,
      outbound: this.outbound,
      ...requested,
      requestedAt: Date.now(),
      id: requested.id ?? crypto.randomUUID(),
    };
    return outcome === "cancelled" ? recordCancelled(options, reason) : recordUnrun(options, outcome, reason);
  }

  /**
   * A deployment event refused before it was queued (paused, frozen): its deployment is told why, and, `kept` for
   * the catch-up, that it waits for the end of the pause or the freeze.
   */
  refusedDeployment(deploy: RefusedDeployment, reason: string, kept = false): void {
    this.outbound?.refused?.(deploy, reason, kept);
  }
}
