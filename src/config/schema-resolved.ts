/**
 * Options after defaults, the config file and the environment are applied: what every key is when nothing sets
 * it. What a user writes is schema.ts; how the layers resolve is resolve.ts.
 */
import type * as NodeOs from "node:os";
import type { AuditSettings, McpMode } from "./audit.ts";
import type { EnvCommandFormat, EnvValue } from "./env.ts";
import type { FreezeWindow } from "./freeze.ts";
import type { GateSettings } from "./gate.ts";
import type { LimitsSettings } from "./limits.ts";
import type { OidcSettings, TrustedHeaderSettings } from "./people.ts";
import type { ReleaseSettings } from "./releases.ts";
import type { AppConfig, UserConfig } from "./schema.ts";
import type { NotifyTarget, StatusSettings } from "./schema-notify.ts";
import type { WatchSettings } from "./watch.ts";
import type { PreviewsKey } from "./previews.ts";

/** Options after defaults, the config file and the environment are applied. */
export interface ResolvedConfig
  extends Required<
    Omit<
      UserConfig,
      | "secret"
      | "branch"
      | "events"
      | "deployRefs"
      | "tags"
      | "apps"
      | "adminPort"
      | "adminToken"
      | "tokens"
      | "adminMcp"
      | "audit"
      | "adminOidc"
      | "adminTrustedHeader"
      | "status"
      | "notify"
      | "healthCheckUrl"
      | "healthCheck"
      | "pollIntervalMs"
      | "allowedSigners"
      | "env"
      | "envFile"
      | "envCommand"
      | "envCommandFormat"
      | "envCommandTimeoutMs"
      | "ageIdentityFile"
      | "releases"
      | "gate"
      | "limits"
      | "watch"
      | "activateScript"
      | "previews"
      | "boundConnections"
      | "freeze"
      | "paths"
      | "skipMarkers"
      | "deploymentCreators"
      | "adminPublicUrl"
      | "environmentUrl"
    >
  > {
  deploymentCreators?: string[];
  adminPublicUrl?: string;
  environmentUrl?: string;
  freeze?: FreezeWindow[];
  paths?: string[];
  skipMarkers?: boolean | string[];
  /** Unset: bounded unless `hostname` is a loopback address (`boundedPort`). */
  boundConnections?: boolean;
  pollIntervalMs?: number;
  allowedSigners?: string;
  env?: Record<string, EnvValue>;
  envFile?: string;
  envCommand?: string;
  envCommandFormat?: EnvCommandFormat;
  envCommandTimeoutMs?: number;
  ageIdentityFile?: string;
  /** With its defaults, the path absolute. */
  releases?: ReleaseSettings;
  /** With its defaults. */
  gate?: GateSettings;
  limits?: LimitsSettings;
  watch?: WatchSettings;
  previews?: PreviewsKey;
  activateScript?: string;
  status?: StatusSettings;
  notify?: NotifyTarget[];
  healthCheckUrl?: string;
  healthCheck?: string;
  adminPort?: number;
  adminToken?: string;
  tokens?: Record<string, unknown>[];
  adminMcp?: McpMode;
  audit?: AuditSettings;
  adminOidc?: OidcSettings;
  adminTrustedHeader?: TrustedHeaderSettings;
  /** Absent until a secret is configured or `ensureWebhookSecret` generates one. */
  secret?: string;
  branch?: string;
  events?: string[];
  deployRefs?: string[];
  tags?: string;
  /** The `apps` entries as written (validated per field); empty in single-app mode. */
  apps: AppConfig[];
}

/**
 * The build slots of a service that does not set `maxConcurrentDeploys`: one per CPU it may run on, at least 2. Asked
 * of `navigator` (Bun, Node.js 21 and later): loading node:os would cost every start a third of a millisecond.
 */
export function defaultSlots(): number {
  const cpus = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency;
  return Math.max(2, cpus ?? (require("node:os") as typeof NodeOs).availableParallelism());
}

export function defaultConfig(cwd = process.cwd()): ResolvedConfig {
  return {
    port: 3141,
    repoPath: cwd,
    runScript: "npm run deploy",
    runTimeoutMs: 1_800_000,
    rollbackOnFailure: false,
    pull: "pull",
    path: "/",
    queueLimit: 100,
    maxConcurrentDeploys: defaultSlots(),
    queuePolicy: "fifo",
    hostname: "0.0.0.0",
    heartbeatMs: 15_000,
    acknowledge: false,
    dedupeDeliveries: false,
    maxBodyBytes: 25 * 1024 * 1024,
    keepDeploys: 200,
    keepDays: 0,
    maxLogBytes: 10 * 1024 * 1024,
    trustProxy: false,
    healthCheckTimeoutMs: 60_000,
    healthCheckIntervalMs: 2_000,
    apps: [],
    adminHostname: "127.0.0.1",
    httpsPrompt: true,
    adminTokenLogin: true,
    adminSessionHours: 12,
    adminKioskDays: 30,
    catchUp: false,
    deploymentEvents: false,
    environment: "production",
  };
}
