/**
 * The types the steps of a deploy share: what a deploy needs of the configuration (DeploySettings), and what
 * every stage works with (DeployContext).
 */
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import type { RollbackTarget, Step } from "../types.ts";
import type { Captures } from "./capture.ts";
import type { DeployLimits } from "./limits.ts";

/** The health check keys; the time keys take their defaults when unset (settings built by hand, as a library). */
export type HealthSettings = Partial<
  Pick<ResolvedConfig, "healthCheckUrl" | "healthCheck" | "healthCheckTimeoutMs" | "healthCheckIntervalMs">
>;

/** What a deploy needs of the configuration (a single app's, or one `apps` entry's). */
export type DeploySettings = Pick<
  ResolvedConfig,
  | "repoPath"
  | "runScript"
  | "runTimeoutMs"
  | "rollbackOnFailure"
  | "queueLimit"
  | "keepDeploys"
  | "keepDays"
  | "maxLogBytes"
  | "status"
  | "notify"
  | "branch"
> &
  HealthSettings &
  Partial<
    Pick<
      ResolvedConfig,
      | "allowedSigners"
      | "env"
      | "envFile"
      | "envCommand"
      | "envCommandFormat"
      | "envCommandTimeoutMs"
      | "ageIdentityFile"
      | "releases"
      | "activateScript"
      | "pull"
      | "gate"
      | "freeze"
      // Whether a request a freeze refuses when its turn comes is kept for catch-up (deploy/request.ts).
      | "catchUp"
      | "limits"
      | "watch"
      // Whether an operator's deploy went past `paths` (deploy/deployer.ts says so in its record).
      | "paths"
      // What a forge's deployment statuses say (notify/deployments.ts).
      | "environment"
      | "environmentUrl"
      | "adminPublicUrl"
      // The service's build slots (deploy/slot.ts); a library's settings without it get the default.
      | "maxConcurrentDeploys"
    >
  >;

/** What a deploy was asked to move to: a commit of a rollback or a ref, or the commit a forge named as pushed. */
export interface Asked {
  /** A `service rollback` or a deploy of a ref: reset to this commit instead of pulling. */
  target?: RollbackTarget;
  /** The commit a forge's delivery names as pushed: after the pull, HEAD must be it or a descendant of it. */
  pushed?: string;
  /** The commit a gate passed (gate/stage.ts): the pull moves exactly to it. */
  gated?: string;
  /** With `releases.carry`: carry nothing this once. */
  noCarry?: boolean;
}

/** What a stage writes into the deploy's transcript (see run.ts). */
export interface RunTranscript {
  readonly id: string;
  /** A line of the service's own about the deploy, redacted. */
  step(name: Step, text: string): void;
  /** The output handler of a step: redacted, kept in `into`, and streamed. */
  output(name: Step, into: Captures): (stream: "stdout" | "stderr", data: Uint8Array) => void;
  /** What the deploy waits for now (`checks`), kept in its running record; undefined once it goes on. */
  waiting?(what: string | undefined): void;
}

/** What every stage of one deploy works with. */
export interface DeployContext {
  run: RunTranscript;
  /** The settings in force: the post-pull reload changes the run script and its timeout. */
  config: DeploySettings;
  /** Environment of git and the run script: the service's own without secrets, with the deploy's variables. */
  env: Record<string, string | undefined>;
  /** The service's own environment, where the reload reads SERVICE_* settings. */
  processEnv: NodeJS.ProcessEnv;
  cwd: string;
  app?: string;
  /** Who cancelled the deploy (`service cancel`), once someone did: what has not started does not start. */
  cancelled(): string | undefined;
  /** The deploy's `limits` (limits.ts), once made: every script of the deploy runs under them. */
  limits?: DeployLimits;
  /** Calls `listener` once the deploy is cancelled (at once when it already is): a wait ends then. */
  onCancel(listener: (by: string) => void): void;
}
