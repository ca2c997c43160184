import type {
  DeployResult,
  GateResult,
  HealthCheckResult,
  ReleaseResult,
  RollbackResult,
  RollbackTarget,
  VerifyResult,
} from "../types.ts";
import type { WatchResult } from "../watch-types.ts";
import { captures } from "./capture.ts";
import { PullState } from "./pull.ts";
import type { StepRun } from "./script.ts";

/** What a deploy produced; its ending adds the id, the log files and the times. */
export type Produced = Omit<DeployResult, "id" | "log" | "startedAt" | "finishedAt" | "durationMs" | "actor">;

/**
 * What a deploy's stages found, filled as they go (the plain flow's and the releases flow's alike): a stage that
 * throws midway still leaves what it learnt, and the result is made from it once.
 */
export class DeployState {
  readonly pulled = new PullState();
  readonly runOut = captures();
  ran: StepRun;
  error: string | null = null;
  healthCheck?: HealthCheckResult;
  rollback?: RollbackResult;
  rolledBack = false;
  release?: ReleaseResult;
  switchedBack = false;
  /** With `allowedSigners`: the verdict on the commit to deploy. */
  verify?: VerifyResult;
  /** With `gate`: what the gate decided. */
  gate?: GateResult;
  /** Set by a flow whose success does not rest on the run script (an instant switch runs none). */
  ok?: boolean;
  /** With `watch`: how it ended (docs/watch.md); `watching` while it runs. */
  watch?: WatchResult;
  watching = false;
  /**
   * Set by a flow once what it deployed is live and healthy: takes it back (the rollback in place, the switch back to
   * the previous release), for a watch's breach.
   */
  undo?: () => Promise<void>;
  /** A freeze that refused the deploy when it left a wait (deploy/frozen.ts): its words. */
  frozen: string | null = null;
  /**
   * The commit live before the deploy (docs/deploy-control.md "What is live"), as it was before anything moved;
   * undefined until it is read (pipeline.ts reads the history while git pulls).
   */
  liveBefore: string | null | undefined = undefined;
  /** Set by the releases flow: what is live is what `current` names, whatever the clone holds. */
  withReleases = false;
  /**
   * Set by the releases flow: the pruning of old releases, run after the `[done]` line and before the deploy's queue
   * turn ends (pipeline.ts); the releases removed.
   */
  prune?: () => Promise<{ pruned: string[]; keep: number }>;

  constructor(script: string) {
    this.ran = { exitCode: null, timedOut: false, script };
  }

  /**
   * The commit live when the deploy ended (docs/deploy-control.md "What is live"): with releases, the release
   * `current` names; in place, the one deployed when the deploy ended `ok`, the one rolled back to after a
   * rollback, else the one live before (a failed deploy leaves what was live).
   */
  liveCommit(ok: boolean): string | null {
    const { release, rollback, pulled } = this;
    if (release) return release.live ? release.commit : (release.previous?.commit ?? null);
    if (this.withReleases) return this.liveBefore ?? null;
    if (this.rolledBack && rollback) return rollback.to;
    return ok ? pulled.after : (this.liveBefore ?? null);
  }

  /**
   * The commit the deploy tried: the one a rollback or a ref named, the one a release was built of, or pulled; else
   * the one its gate learnt, or the one a delivery named as pushed.
   */
  triedCommit(target: RollbackTarget | undefined, pushed?: string): string | null {
    return target?.commit ?? this.release?.commit ?? this.pulled.after ?? this.gate?.commit ?? pushed ?? null;
  }

  /**
   * Why the deploy was refused after it was acknowledged (docs/deploy-control.md "Requests"): a freeze that began
   * while it waited, a gate that did not open, a commit without a good signature. Undefined for a deploy that ran,
   * failed for another reason, or was cancelled.
   */
  refusal(): string | undefined {
    const { gate, verify } = this;
    if (this.frozen) return this.frozen;
    if (gate && !gate.ok && (gate.outcome === "shut" || gate.outcome === "timeout"))
      return `gate: ${gate.reason ?? gate.outcome}`;
    if (verify && !verify.ok) return `signature: ${verify.reason ?? "refused"}`;
    return undefined;
  }

  /** What the deploy produced; `cancelledBy` names who cancelled it, when someone did. */
  produced(cancelledBy: string | undefined): Omit<Produced, "commit" | "previousCommit" | "target"> {
    const { pulled, ran, runOut, error, healthCheck, rollback, release, verify, gate, watch } = this;
    const succeeded = this.ok ?? (pulled.success && ran.exitCode === 0 && error === null);
    return {
      ok: cancelledBy ? false : rollback ? rollback.ok : succeeded,
      ...(healthCheck ? { healthCheck } : {}),
      ...(verify ? { verify } : {}),
      ...(gate ? { gate } : {}),
      ...(ran.killedBy ? { killedBy: ran.killedBy } : {}),
      pull: pulled.result(),
      run: { ...ran, stdout: runOut.stdout.toString(), stderr: runOut.stderr.toString() },
      error: cancelledBy ? `cancelled ${cancelledBy}` : error,
      ...(rollback ? { rollback } : {}),
      rolledBack: this.rolledBack,
      ...(release ? { release } : {}),
      ...(this.switchedBack ? { switchedBack: true as const } : {}),
      ...(watch ? { watch } : {}),
    };
  }
}
