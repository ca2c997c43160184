/**
 * What a deploy is asked with (DeployOptions) and what its outbound sinks are told of it (OutboundDeploy).
 */
import type { DeployLog } from "../history/log.ts";
import type { PathsRecord } from "../history/record.ts";
import type { Cancellation } from "../queue/cancel.ts";
import type { DeploySettings } from "../steps/context.ts";
import type { Logger } from "../system/logger.ts";
import type {
  DeployResult,
  DeploymentInfo,
  DeploySink,
  ForgeDelivery,
  RollbackTarget,
  Served,
  Trigger,
} from "../types.ts";

export interface DeployOptions {
  /** The configuration in force when the deploy was requested. */
  config: DeploySettings;
  /** The deploy id. @default a new UUID */
  id?: string;
  /** The app deployed (multi-app mode); named in the logs and the script's environment. */
  app?: string;
  trigger: Trigger;
  /** Who asked for it (docs/log-files.md "Who deployed what"); cleaned and redacted before it is recorded. */
  actor?: string;
  /** A person signed in with an OpenID provider: the provider's subject (people are matched by it), recorded. */
  sub?: string;
  /**
   * A `service rollback` or a deploy of a ref: reset to this commit instead of pulling (docs/deploy-control.md
   * "`service rollback`", "Deploy a ref").
   */
  target?: RollbackTarget;
  /** When the deploy was asked for (Date.now()): its wait in the queue is a phase of its record. Set by the deployer. */
  requestedAt?: number;
  /** Deploy without waiting at the app's gate (`service deploy --skip-gate`, the API's `skipGate`); recorded. */
  skipGate?: boolean;
  /** With `releases.carry`: build from nothing this once (`service deploy --no-carry`, the API's `carry: false`); recorded. */
  noCarry?: boolean;
  /** Asked with force: it goes past a pause or a freeze (deploy/frozen.ts looks again when its turn comes). */
  force?: boolean;
  /**
   * Set by the deployer when a deploy asked with force goes past a pause or a freeze: what it went past, described
   * (`deploys are paused: …`; the record says `forced: true`).
   */
  forced?: string;
  /** The commit a forge's delivery names as pushed: after the pull, HEAD must be it or a descendant of it. */
  pushed?: string;
  /** With `paths`: the changed files that matched them (the first 20), recorded. */
  paths?: PathsRecord;
  /** A GitHub deployment event's deployment (triggers/deployment.ts): recorded, and its statuses posted. */
  deployment?: DeploymentInfo;
  /** The forge event and delivery id of a webhook deploy (recorded, and given to the script). */
  event?: string | null;
  delivery?: string | null;
  /** Working directory: where `.service/logs/` lives and relative config paths resolve. */
  cwd: string;
  /** Receives every event as it happens (the HTTP stream, the terminal). The log files always get them too. */
  sink?: DeploySink;
  /** Environment of git and the run script (secrets removed). @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Problems with the configuration in force, said at the start of the deploy (an invalid config file). */
  notices?: string[];
  /** What the deploy should know of how it was asked (a body that did not parse): `[warn]` lines at its start. */
  warnings?: string[];
  /**
   * Secrets to redact from the output, the result and the logs (config/deploy-secrets.ts); the values the deploy
   * reads from its own files (`envFile`, `env: { file }`) are added to them.
   */
  secrets?: string[];
  /** With `queuePolicy: latest`: the requests it serves, filled in while it waits (see queue/latest.ts). */
  served?: Served;
  /** Set when the deploy is cancelled while it runs (`service cancel`). */
  cancellation?: Cancellation;
  /** Where the deploy's own warnings go (a log that cannot be written). @default consola.withTag("service") */
  logger?: Logger;
  /** The deploy's outbound sink (commit statuses, notifications), made by its owner; none when absent. */
  outbound?: OutboundSinks;
}

/**
 * A deploy's options once its id is fixed: the deployer makes the id, before the queue, and only there. `ended` hears
 * the result as the `[done]` line goes out, while what follows it (pruning) still holds the queue's turn.
 */
export type PlannedDeploy = DeployOptions & {
  id: string;
  ended?: (result: DeployResult) => void;
  /** Told once its log files exist (or could not be made): from then on they keep the request, not its file. */
  logged?: () => void;
  /** Aborted when the service stops: a watch ends then, not finished (docs/watch.md). */
  stopping?: AbortSignal;
};

/** What an outbound sink is told of the deploy it follows (see notify/sink.ts). */
export interface OutboundDeploy {
  id: string;
  app?: string;
  trigger: Trigger;
  /** Who started it (cleaned), and the ref a deploy of a ref named. */
  actor: string | null;
  ref?: string;
  forced?: true;
  cwd: string;
  repoPath: string;
  config: Pick<DeploySettings, "status" | "notify" | "branch" | "environment" | "environmentUrl" | "adminPublicUrl">;
  env: NodeJS.ProcessEnv;
  /** The deploy's log files: outcomes are written back into them. */
  log: DeployLog;
  /** The deploy's secrets (the webhook secrets): kept out of every line and payload, as in the logs. */
  secrets: string[];
  /** The forge's event and delivery id, when a forge sent the deploy. */
  forge?: ForgeDelivery;
  /** A GitHub deployment event's deployment: its statuses are posted, and no Deployment is created. */
  deployment?: DeploymentInfo;
}

/** What the queue knows of a deploy that waits for its turn (no log files yet). */
export type QueuedDeploy = Pick<OutboundDeploy, "id" | "app" | "trigger" | "cwd" | "repoPath" | "config" | "env"> & {
  /** A deployment event's deployment: its `queued` status goes there. */
  deployment?: DeploymentInfo;
  /** The commit it will deploy, when that is known already (a rollback, a deploy of a ref); else the branch's tip. */
  commit?: string;
};

/** A deployment event's deployment refused before anything was queued (a pause, a freeze). */
export type RefusedDeployment = Pick<OutboundDeploy, "app" | "cwd" | "repoPath" | "config" | "env"> & {
  deployment: DeploymentInfo;
};

/**
 * Makes the outbound sink of one deploy; undefined when the deploy has nothing to send. `queued` hears a deploy wait
 * in the queue (its forge deployment's `queued` status); `refused` a deployment event refused before it was queued
 * (its deployment's `error` status, with why).
 */
export type OutboundSinks = ((deploy: OutboundDeploy) => DeploySink | undefined) & {
  queued?: (deploy: QueuedDeploy) => void;
  refused?: (deploy: RefusedDeployment, reason: string, kept: boolean) => void;
};
