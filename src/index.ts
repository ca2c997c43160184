export { createServiceServer, type ServiceServer, type ServiceServerOptions } from "./server.ts";
export { ensureWebhookSecret, type EnsuredSecret } from "./secret.ts";
export { loadConfig, ConfigError, type LoadConfigOptions, type ResolvedConfig, type UserConfig } from "./config.ts";
export type { DeployResult, PullResult, RunResult, RollbackResult, DeployEvent, Trigger } from "./deploy/events.ts";
