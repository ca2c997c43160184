import type { WatchResult } from "./watch-types.ts";

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
  /**
   * The commit the deploy tried (pulled, pushed, built or named by `--ref` or a rollback), in words; absent when it
   * got no commit to try (a refusal before the pull). A rollback or a deploy of a ref adds how it was named: the
   * commit it reset to, the deploy that named it, the ref, the kept release.
   */
  target?: DeployTarget;
  /** Present when `allowedSigners` is set: whether the commit to deploy carries a good signature, and whose. */
  verify?: VerifyResult;
  /** Where the deploy spent its time: the queue wait, then each phase (docs/log-files.md "Phases"). */
  phases?: DeployPhase[];
  /** Under `limits`: the run script was killed for memory, or at `tasks` (docs/production.md "Limits"). */
  killedBy?: "memory" | "tasks";
  /** With `gate`: what it decided on the commit, or that it was skipped (docs/configuration.md "gate"). */
  gate?: GateResult;
  /** With `releases` (docs/releases.md): the release this deploy built or switched to, and the one live before. */
  release?: ReleaseResult;
  /** True when a failed activate script or health check switched `current` back to the previous release. */
  switchedBack?: true;
  /** Who started the deploy (docs/log-files.md "Who deployed what"); null in records from before it was kept. */
  actor: string | null;
  /**
   * The commit live when the deploy ended (docs/deploy-control.md "What is live"): with releases, the one `current`
   * names; in place, the one deployed when the deploy ended ok, the one rolled back to after a rollback, else the
   * one live before; null when none is known.
   */
  commit: CommitInfo | null;
  /** The commit live before the deploy (as `commit` says it); null when none is known. */
  previousCommit: CommitInfo | null;
  /** With `watch`: how the watch after the health check ended (docs/watch.md). */
  watch?: WatchResult;
  /** A deploy that changed what is live: how long its commits waited for it (docs/log-files.md "DORA figures"). */
  lead?: LeadTime;
  /** The deploy id and the paths of its two log files. */
  log: { id: string; json: string; log: string };
  startedAt: string;
  finishedAt: string;
  durationMs: number;
}

/** The commits a deploy made live (at most 1000 of them) and how long each waited since its committer date. */
export interface LeadTime {
  commits: number;
  medianSeconds: number;
  oldestSeconds: number;
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

/** The health check of a deploy (docs/deploy-control.md "Health check"). */
export interface HealthCheckResult {
  ok: boolean;
  attempts: number;
  durationMs: number;
  /** null when healthy; otherwise why not (the status code, exit code, and the timeout). */
  error: string | null;
}

/** The signature check of the commit a deploy runs (docs/security.md "Signed commits"). */
export interface VerifyResult {
  /** True when the commit carries a good signature by a key of the allowed signers. */
  ok: boolean;
  /** The commit checked; null when there was none. */
  commit: string | null;
  /** The principal of the allowed-signers file whose key signed it; null when refused. */
  signer: string | null;
  /** null when ok; otherwise why the commit was refused. */
  reason: string | null;
  /** A deploy of a tag: the tag checked before the commit, and the principal whose key signed it (null when refused). */
  tag?: { name: string; signer: string | null };
}

/** The forge deployment a deploy was started by (a GitHub `deployment` event): its statuses are posted to it. */
export interface DeploymentInfo {
  id: number;
  environment: string;
  task: string;
}

/** What a `service rollback`, or a deploy of a ref (`service deploy --ref`), deploys. */
export interface RollbackTarget {
  /** The full commit reset to. */
  commit: string;
  /** The deploy whose commit this is; null when a commit was named directly. */
  deployId: string | null;
  /** With `releases`: the kept release named (by its id, or from the dashboard's "switch back"). */
  release?: string;
  /** A deploy of a ref: the ref as it was named (a tag, a branch, a commit, a deploy id). */
  ref?: string;
  /** The tag the ref or the rollback named (`v1.2.0`): with `allowedSigners`, its signature is checked too. */
  tag?: string;
  /** What was noticed in choosing it (tags above it off `branch`): a `[warn]` line at the deploy's start. */
  warning?: string;
}

/** The commit a deploy tried, and for a rollback or a ref how it was named. */
export type DeployTarget = CommitInfo & Partial<RollbackTarget>;

/** A release of a deploy with `releases` (docs/releases.md "The record"). */
export interface ReleaseResult {
  /** The release's directory name under `<path>/releases/`: the UTC time and the commit. */
  id: string;
  /** Its directory. */
  path: string;
  /** The commit checked out in it. */
  commit: string;
  /** The release `current` named before this deploy; null on the first. */
  previous: { id: string; commit: string | null } | null;
  /** False for an instant switch to a kept release (no pull, no build). */
  built: boolean;
  /** Whether `current` names it when the deploy ends (false: its build failed, or it was switched back from). */
  live: boolean;
  /** The activate script's exit code (null: it could not start, or timed out), when it ran. */
  activate?: { exitCode: number | null; timedOut: boolean };
  /** With `releases.carry`: what was copied from the live release before the build (files and bytes of each path). */
  carried?: { path: string; files: number; bytes: number }[];
  /** True when the deploy was asked not to carry anything (`service deploy --no-carry`, the API's `carry: false`). */
  noCarry?: true;
  /** The releases pruned after the deploy's end (written into the record once the pruning finished). */
  pruned?: string[];
}

/** A commit as a record names it: what went live, in words a person recognises. */
export interface CommitInfo {
  sha: string;
  /** The first line of its message ("" when the commit is not in the repository, like the two below). */
  subject: string;
  /** Its author's name. */
  author: string;
  /** Its author date (ISO 8601). */
  date: string;
}

/** One phase of a deploy's time (the record's `phases`): the queue wait, then the stages as they ran. */
export interface DeployPhase {
  /**
   * `queue`, or the stage: slot, gate, pull, verify, release (prepare), run, switch (a release switched to and
   * activated), health, rollback (`switch back` with releases), `health after rollback` (`health after switch back`).
   */
  name: string;
  startedAt: string;
  ms: number;
}

/** What a gate decided on a commit (docs/configuration.md "gate"). */
export interface GateResult {
  ok: boolean;
  /**
   * open: every required check succeeded (and the bake passed); shut: one failed, or the forge refused to answer;
   * timeout: `waitMs` passed; cancelled: `service cancel` ended the wait; skipped: `--skip-gate`.
   */
  outcome: "open" | "shut" | "timeout" | "cancelled" | "skipped";
  /** The commit gated: the one the deploy then moved to. */
  commit: string | null;
  /** The required checks as last seen: name, state (`missing` when nothing matching is reported), URL. */
  checks: { name: string; state: string; url?: string }[];
  /** Why it shut, timed out, or was skipped. */
  reason?: string;
  /** With `bakeMs`: how long it waited after the checks turned success. */
  bakedMs?: number;
}

/**
 * How a deploy was asked for (docs/deploy-control.md "Requests"): `recovered` is a request acknowledged by a process
 * that died before it ran, replayed at the next start.
 */
export type Trigger = "webhook" | "cli" | "api" | "rollback" | "poll" | "catch-up" | "recovered" | "preview";
/** `status` and `notify` lines record outbound calls (commit statuses, notifications). */
export type Step =
  | "deploy"
  | "pull"
  | "verify"
  | "gate"
  | "slot"
  | "config"
  | "warn"
  | "release"
  | "run"
  | "health"
  | "rollback"
  | "watch"
  | "log"
  | "status"
  | "notify";

export type DeployEvent =
  | { type: "queued"; position: number }
  | {
      type: "start";
      id: string;
      startedAt: Date;
      trigger: Trigger;
      repoPath: string;
      /** Who started it. */
      actor?: string | null;
      event?: string | null;
      delivery?: string | null;
    }
  /** A line the service writes about the deploy (not output of git or the script). */
  | { type: "step"; step: Step; text: string }
  | { type: "output"; step: Step; stream: "stdout" | "stderr"; data: Uint8Array }
  /** What the running deploy waits for now (`checks`: at its gate), null once it goes on; no line of its own. */
  | { type: "waiting"; for: string | null }
  /**
   * The last event; `cancelled` when a cancel (a request, a shutdown) ended the deploy; `refused` when it was refused
   * after it was acknowledged (its gate, a signature, a freeze), `superseded` when a newer request or a change of the
   * remote made it moot (docs/deploy-control.md "Requests").
   */
  | { type: "done"; result: DeployResult; cancelled?: boolean; outcome?: Unrun };

export type DeploySink = (event: DeployEvent) => void;

/** How a deploy that ended counts, for the metrics, the API and notifications: a rollback is not a success. */
export type Outcome = "ok" | "failed" | "rolled_back" | "cancelled" | Unrun;

/** The two ends of a request that was acknowledged and never ran its script (docs/deploy-control.md "Requests"). */
export type Unrun = "refused" | "superseded";

/** The outcomes, in the order the docs list them. */
export const OUTCOME_NAMES: readonly Outcome[] = ["ok", "failed", "rolled_back", "cancelled", "refused", "superseded"];

/** The requests a deploy served (in its record): how many, and their forge delivery ids. */
export interface Served {
  requests: number;
  deliveries: string[];
  /** Who asked for each request it served after its own, and when (the first 100). */
  replaces?: { actor: string | null; delivery: string | null; at: string }[];
}

/** The forge event and delivery id of the request that asked for a deploy; null when it carries none (curl, a CI job). */
export interface ForgeDelivery {
  event: string | null;
  delivery: string | null;
}
