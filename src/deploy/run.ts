import type { Captures } from "../steps/capture.ts";
import type { DeployEvent, DeployResult, DeploySink, ForgeDelivery, Step, Unrun } from "../types.ts";
import type { WatchProgress } from "../watch-types.ts";
import { pruneLogs } from "../history/retention.ts";
import { DeployLog } from "../history/log.ts";
import { cleanActor } from "../system/actor.ts";
import { OutputRedactor, Redaction } from "../system/redact.ts";
import { forgeOf, redactedCommit, servedOf } from "./run-words.ts";
import type { RunTranscript } from "../steps/context.ts";
import type { Produced } from "../steps/state.ts";
import type { PlannedDeploy } from "./types.ts";
import { Phases } from "./phases.ts";
import { releaseWhenIdle } from "../runtime/gc.ts";
import { track } from "./after-done.ts";

/**
 * How a deploy's record ends: it ran (whatever its result), it was cancelled, or, acknowledged, it was refused or
 * superseded with `reason` (docs/deploy-control.md "Requests").
 */
export type Ending = "done" | "cancelled" | { outcome: Unrun; reason: string };

/**
 * One deploy's log, events and ending, whether it ran or could not start. Every event goes to the log files
 * and then to the sinks; `end` builds the result, writes the final record before the `[done]` line reaches a
 * sink, and runs retention. Texts the service writes are redacted here, once.
 */
export class DeployRun implements RunTranscript {
  readonly id: string;
  readonly startedAt = new Date();
  private readonly redaction: Redaction;
  readonly forge: ForgeDelivery;
  /** Who started it, cleaned and redacted like every other text of the deploy. */
  readonly actor: string | null;
  private readonly log: DeployLog;
  private readonly sinks: DeploySink[];
  /** Where its time goes (phases.ts), marked by its own lines. */
  private readonly phases: Phases;
  /** A refused or superseded request's ending, once it ended so. */
  private unrun: { outcome: Unrun; reason: string } | undefined;
  /** Output held back by redactors (a secret may span two chunks), released before each line of the service. */
  private readonly redactors: OutputRedactor[] = [];

  constructor(private readonly options: PlannedDeploy) {
    const { config } = options;
    this.id = options.id;
    this.phases = new Phases(options.requestedAt, this.startedAt.getTime());
    this.redaction = Redaction.of(options.secrets ?? []);
    this.forge = forgeOf(options, this.redaction);
    const actor = cleanActor(options.actor);
    this.actor = actor ? this.redaction.text(actor) : null;
    const ref = options.target?.ref;
    this.log = new DeployLog(
      options.cwd,
      {
        id: this.id,
        startedAt: this.startedAt,
        ...this.forge,
        trigger: options.trigger,
        actor: this.actor,
        ...(options.sub ? { sub: this.redaction.text(options.sub) } : {}),
        ...(ref !== undefined ? { ref: this.redaction.text(ref) } : {}),
        ...(options.forced ? { forced: true } : {}),
        ...(options.pushed ? { pushed: options.pushed } : {}),
        ...(options.paths ? { paths: options.paths } : {}),
        ...(options.deployment ? { deployment: options.deployment } : {}),
        repoPath: config.repoPath,
        runScript: this.redaction.text(config.runScript),
        app: options.app,
        served: servedOf(options, this.redaction),
      },
      { maxLogBytes: config.maxLogBytes, makeRoom: () => this.prune(), logger: options.logger },
    );
    options.logged?.();
    // Commit statuses and notifications: a sink like the client's, that never holds the run or its `[done]`.
    const outbound = options.outbound?.({
      id: this.id,
      app: options.app,
      trigger: options.trigger,
      actor: this.actor,
      ...(ref !== undefined ? { ref: this.redaction.text(ref) } : {}),
      ...(options.forced ? { forced: true as const } : {}),
      forge: this.forge,
      ...(options.deployment ? { deployment: options.deployment } : {}),
      cwd: options.cwd,
      repoPath: config.repoPath,
      config,
      env: options.env ?? process.env,
      log: this.log,
      secrets: options.secrets ?? [],
    });
    this.sinks = [options.sink, outbound].filter((sink): sink is DeploySink => sink !== undefined);
  }

  /** The `[deploy]` line that opens the stream. */
  start(): void {
    const { options, forge } = this;
    this.emit({
      type: "start",
      id: this.id,
      startedAt: this.startedAt,
      trigger: options.trigger,
      repoPath: options.config.repoPath,
      actor: this.actor,
      ...forge,
    });
  }

  /** A line of the service's own about the deploy, redacted. */
  readonly step = (name: Step, text: string): void =>
    this.emit({ type: "step", step: name, text: this.redaction.text(text) });

  /** What the deploy waits for now, in its running record (`service status` says it). */
  waiting(what: string | undefined): void {
    this.log.waiting(what);
    this.emit({ type: "waiting", for: what ?? null });
  }

  /** A watch's progress in its running record (`service status`, `/api/apps`); undefined once it ended. */
  watching(progress: WatchProgress | undefined): void {
    this.log.watching(progress);
  }

  /** The output handler of a step: redacted, kept in `into`, and streamed. */
  output(name: Step, into: Captures): (stream: "stdout" | "stderr", data: Uint8Array) => void {
    const redactorFor = (stream: "stdout" | "stderr") => {
      const redactor = new OutputRedactor(this.redaction, (data) => {
        into[stream].add(data);
        this.emit({ type: "output", step: name, stream, data });
      });
      this.redactors.push(redactor);
      return redactor;
    };
    const streams = { stdout: redactorFor("stdout"), stderr: redactorFor("stderr") };
    return (stream, data) => streams[stream].write(data);
  }

  /**
   * The one ending of every deploy: the result, its final record and the `[done]` line, then retention once the
   * `[done]` line is on its way (a task of its own, see retentionDone): neither the line nor the next deploy of the
   * queue waits for it.
   */
  end(produced: Produced, ending: Ending = "done", finishedAt = new Date()): DeployResult {
    const { redaction, log } = this;
    const { rollback, healthCheck, target, verify, gate, release, switchedBack, killedBy, watch } = produced;
    const checked = (health: typeof healthCheck) =>
      health && { ...health, error: health.error && redaction.text(health.error) };
    const result: DeployResult = {
      id: this.id,
      ok: produced.ok,
      pull: produced.pull,
      run: { ...produced.run, script: redaction.text(produced.run.script) },
      error: produced.error && redaction.text(produced.error),
      ...(rollback
        ? {
            rollback: {
              ...rollback,
              error: rollback.error && redaction.text(rollback.error),
              ...(rollback.healthCheck ? { healthCheck: checked(rollback.healthCheck) } : {}),
            },
          }
        : {}),
      rolledBack: produced.rolledBack,
      ...(healthCheck ? { healthCheck: checked(healthCheck) } : {}),
      ...(target
        ? {
            target: {
              ...redactedCommit(target, redaction)!,
              ...(target.ref === undefined ? {} : { ref: redaction.text(target.ref) }),
            },
          }
        : {}),
      ...(verify ? { verify: { ...verify, reason: verify.reason && redaction.text(verify.reason) } } : {}),
      ...(gate ? { gate: { ...gate, ...(gate.reason ? { reason: redaction.text(gate.reason) } : {}) } } : {}),
      ...(release ? { release } : {}),
      ...(killedBy ? { killedBy } : {}),
      ...(switchedBack ? { switchedBack } : {}),
      actor: this.actor,
      commit: redactedCommit(produced.commit, redaction),
      previousCommit: redactedCommit(produced.previousCommit, redaction),
      ...(watch ? { watch: { ...watch, ...(watch.reason ? { reason: redaction.text(watch.reason) } : {}) } } : {}),
      log: { id: this.id, json: log.jsonPath, log: log.logPath },
      startedAt: this.startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      durationMs: finishedAt.getTime() - this.startedAt.getTime(),
      phases: this.phases.end(finishedAt.getTime()),
    };
    this.unrun = typeof ending === "object" ? { ...ending, reason: redaction.text(ending.reason) } : undefined;
    this.emit({
      type: "done",
      result,
      ...(ending === "cancelled" ? { cancelled: true } : {}),
      ...(this.unrun ? { outcome: this.unrun.outcome } : {}),
    });
    this.options.ended?.(result);
    releaseWhenIdle();
    void track(
      new Promise<void>((resolve) =>
        setTimeout(() => {
          this.prune();
          resolve();
        }, 0),
      ),
    );
    return result;
  }

  private emit(event: DeployEvent): void {
    // The service's own lines come after the output before them: release what the redactors still hold.
    if (event.type !== "output") for (const redactor of this.redactors) redactor.flush();
    // A phase ended: the running record says so, for a page that follows the deploy.
    if (
      (event.type === "step" || event.type === "output") &&
      this.phases.saw(event.step, Date.now(), event.type === "step" ? event.text : undefined)
    )
      this.log.phases([...this.phases.ended()]);
    this.log.write(event);
    // The record is final before the client reads `[done]`, and a record that could not be kept is said before it.
    if (event.type === "done") {
      const { unrun } = this;
      this.log.finish(
        event.result,
        unrun ? unrun.outcome : event.cancelled ? "cancelled" : "done",
        unrun
          ? { reason: unrun.reason }
          : event.cancelled
            ? { cancel: this.options.cancellation?.mark ?? { by: null, at: event.result.finishedAt } }
            : {},
      );
    }
    this.tell(event);
  }

  /** Hands an event to the sinks, with the line saying (once) why the log files are incomplete. */
  private tell(event: DeployEvent): void {
    const notice = this.log.takeNotice();
    const events: DeployEvent[] = [event];
    // After the event that met the problem, so the stream still opens with its `[deploy]` line; `[done]` stays last.
    if (notice) events.splice(event.type === "done" ? 0 : 1, 0, { type: "step", step: "log", text: notice });
    for (const each of events) {
      for (const sink of this.sinks) {
        try {
          sink(each);
        } catch {
          // A sink that fails (a client gone) never touches the deploy.
        }
      }
    }
  }

  /** Retention after each deploy; a failure to prune never fails the deploy. */
  private prune(): void {
    const { cwd, config, app } = this.options;
    try {
      pruneLogs(cwd, config.keepDeploys, config.keepDays, Date.now(), app);
    } catch {}
  }
}
