export { createServiceServer, type ServiceServer, type ServiceServerOptions, type StopOptions } from "./server.ts";
export { ensureWebhookSecret, type EnsuredSecret } from "./secret.ts";
export { loadConfig, type LoadConfigOptions } from "./config.ts";
export { ConfigError, type ResolvedConfig, type UserConfig } from "./config-schema.ts";
export type {
  DeployResult,
  PullResult,
  RunResult,
  RollbackResult,
  DeployEvent,
  Trigger,
  HealthCheckResult,
  RollbackTarget,
} from "./deploy/events.ts";
export type { AppStatus } from "./status.ts";
export type { ServerControl } from "./control.ts";
export type { CancelOutcome } from "./deploy/cancel.ts";
export type { Pause } from "./deploy/pause.ts";
