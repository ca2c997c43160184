export { createServiceServer, type ServiceServer, type ServiceServerOptions, type StopOptions } from "./server.ts";
export { ensureWebhookSecret, type EnsuredSecret } from "./config/secret.ts";
export { loadConfig, type LoadConfigOptions } from "./config/load.ts";
export { ConfigError, type UserConfig } from "./config/schema.ts";
export type { ResolvedConfig } from "./config/schema-resolved.ts";
export type { EnvValue } from "./config/env.ts";
export type { ReleaseSettings } from "./config/releases.ts";
export type {
  DeployResult,
  PullResult,
  RunResult,
  RollbackResult,
  DeployEvent,
  Trigger,
  HealthCheckResult,
  RollbackTarget,
  VerifyResult,
  ReleaseResult,
} from "./types.ts";
export type { KeptRelease, ReleasesView } from "./releases/files.ts";
export type { AppStatus } from "./control/status.ts";
export type { ServerControl } from "./control/actions.ts";
export type { CancelResult } from "./queue/cancel.ts";
export type { Pause } from "./queue/pause.ts";
export type { Logger } from "./system/logger.ts";
/** @deprecated The same type, named CancelResult since 0.2. */
export type { CancelResult as CancelOutcome } from "./queue/cancel.ts";
