import type {
  DeployResult,
  HealthCheckResult,
  ReleaseResult,
  RollbackResult,
  RollbackTarget,
  VerifyResult,
} from "../types.ts";
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
  /** Set by a flow whose success does not rest on the run script (an instant switch runs none). */
  ok?: boolean;

  constructor(script: string) {
    this.ran = { exitCode: null, timedOut: false, script };
  }

  /**
   * The commit live when the deploy ended: the release `current` names (with releases), else the one checked out
   * (after a rollback, the one rolled back to).
   */
  liveCommit(): string | null {
    const { release, rollback, pulled } = this;
    if (release) return release.live ? release.commit : (release.previous?.commit ?? null);
    return this.rolledBack && rollback ? rollback.to : pulled.after;
  }

  /** What the deploy produced; `cancelledBy` names who cancelled it, when someone did. */
  produced(
    cancelledBy: string | undefined,
    target: RollbackTarget | undefined,
  ): Omit<Produced, "commit" | "previousCommit"> {
    const { pulled, ran, runOut, error, healthCheck, rollback, release, verify } = this;
    const succeeded = this.ok ?? (pulled.success && ran.exitCode === 0 && error === null);
    return {
      ok: cancelledBy ? false : rollback ? rollback.ok : succeeded,
      ...(healthCheck ? { healthCheck } : {}),
      ...(target ? { target } : {}),
      ...(verify ? { verify } : {}),
      pull: pulled.result(),
      run: { ...ran, stdout: runOut.stdout.toString(), stderr: runOut.stderr.toString() },
      error: cancelledBy ? `cancelled ${cancelledBy}` : error,
      ...(rollback ? { rollback } : {}),
      rolledBack: this.rolledBack,
      ...(release ? { release } : {}),
      ...(this.switchedBack ? { switchedBack: true as const } : {}),
    };
  }
}
