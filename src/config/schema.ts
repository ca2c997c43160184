/**
 * What a configuration is as a user writes it: every key, its type and its default, and the error a value it
 * cannot use raises. Each concept's own shapes are in its file (gate.ts, limits.ts, releases.ts, env.ts,
 * schema-notify.ts …); the options after defaults are schema-resolved.ts. How a value written in a file or the
 * environment is checked is keys.ts; how the layers resolve is resolve.ts.
 */
import type { FreezeWindow } from "./freeze.ts";
import type { AuditSettings, McpMode } from "./audit.ts";
import type { OidcSettings, TrustedHeaderSettings } from "./people.ts";
import type { EnvCommandFormat, EnvValue } from "./env.ts";
import type { GateSettings } from "./gate.ts";
import type { LimitsSettings } from "./limits.ts";
import type { ReleaseSettings } from "./releases.ts";
import type { NotifyTarget, StatusSettings } from "./schema-notify.ts";
import type { WatchSettings } from "./watch.ts";
import type { PreviewsKey } from "./previews.ts";

/** Node and Bun timers fire at once (with a TimeoutOverflowWarning) past 2^31 - 1 ms: the most any *Ms key may be. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Options as a user writes them: every key optional. */
export interface UserConfig {
  /** TCP port to listen on. @default 3141 */
  port?: number;
  /** Directory where `git pull` and the run script execute. @default process.cwd() */
  repoPath?: string;
  /** Command run after the pull; may be multi-line. @default "npm run deploy" */
  runScript?: string;
  /** Maximum time the run script may take, in milliseconds. @default 1800000 */
  runTimeoutMs?: number;
  /** Roll back to the pre-pull commit when the run fails. @default false */
  rollbackOnFailure?: boolean;
  /**
   * How the clone gets the remote's branch: `pull` runs `git pull`; `reset` runs `git fetch` of the branch, then
   * `git reset --hard` to the remote's tip of it, whatever a force-push did to it (docs/deploy-control.md "After a
   * force-push"). @default "pull"
   */
  pull?: "pull" | "reset";
  /** URL path that accepts the webhook. @default "/" */
  path?: string;
  /** Webhook secret. @default generated and stored in `.service.secret` */
  secret?: string;
  /** Most deploys waiting per repoPath; past it a POST gets 429. @default 100 */
  queueLimit?: number;
  /**
   * `fifo`: every request queues its own deploy. `latest`: a request that arrives while a deploy of the same
   * repository waits in the server joins that deploy (it will pull the newest commit anyway). @default "fifo"
   */
  queuePolicy?: "fifo" | "latest";
  /** Address to listen on; `127.0.0.1` behind a reverse proxy on the same machine. @default "0.0.0.0" */
  hostname?: string;
  /** Silence after which a streamed deploy writes a heartbeat line, in milliseconds. @default 15000 */
  heartbeatMs?: number;
  /** Deploy only pushes to this branch: a push payload naming another ref is answered "skipped". @default none */
  branch?: string;
  /**
   * Deploy only on these forge events (`push`, `Push Hook`, `repo:push`, …; `push` matches every forge's push
   * event); another event is answered "skipped". @default every event
   */
  events?: string[];
  /**
   * What `service deploy --ref` and the admin API's `ref` may name: patterns (`*` any characters) of tags and
   * branches, like `[main, "v*"]`. A deploy id may always be named (a retry). @default any ref
   */
  deployRefs?: string[];
  /**
   * Deploy release tags: a glob (`v*`: a pushed tag matching it deploys that tag) or a semver range (`^1.4`: the
   * highest tag in it, never one lower than the live tag). Branch pushes are skipped unless `branch` is set too.
   * @default none
   */
  tags?: string;
  /**
   * Answer a delivery id already seen for the app in the last 24 hours (a forge's retry) with `[skipped]
   * duplicate delivery`, and deploy nothing. @default false
   */
  dedupeDeliveries?: boolean;
  /** Answer at once with the deploy id instead of streaming it (for Git hosts that time out). @default false */
  acknowledge?: boolean;
  /** Largest request body accepted (read only to check a signature or the branch); larger gets 413. @default 26214400 */
  maxBodyBytes?: number;
  /** Retention: the files of this many newest deploys are kept. @default 200 */
  keepDeploys?: number;
  /** Retention: deploy files older than this many days are removed; 0 keeps them whatever their age. @default 0 */
  keepDays?: number;
  /** Most output one deploy's .log keeps (a truncation mark follows); the live stream has everything. @default 10485760 */
  maxLogBytes?: number;
  /** Route by `X-Forwarded-Host` (set by your reverse proxy) instead of `Host`. @default false */
  trustProxy?: boolean;
  /**
   * Count the ports' connections as they are accepted and close the ones past the bounds (a flood of connections
   * that send nothing). @default true, except on a loopback `hostname` (behind a proxy, which holds the clients'
   * connections and forwards requests)
   */
  boundConnections?: boolean;
  /** Commit statuses on the forge: pending, success, failure per deploy. @default none */
  status?: StatusSettings;
  /** Where to announce deploys (chat, ntfy, your own endpoint). @default none */
  notify?: NotifyTarget[];
  /** After the run script: GET this URL until it answers 2xx (the health check). @default none */
  healthCheckUrl?: string;
  /** After the run script: run this command line in repoPath until it exits 0 (the health check). @default none */
  healthCheck?: string;
  /** How long the health check may take before the deploy fails, in milliseconds. @default 60000 */
  healthCheckTimeoutMs?: number;
  /** Time between two health check attempts, in milliseconds. @default 2000 */
  healthCheckIntervalMs?: number;
  /**
   * Ask the remote for the branch's commit this often and deploy a new one (`git ls-remote`, with a jitter);
   * at least 5000. @default none (no polling)
   */
  pollIntervalMs?: number;
  /**
   * An SSH allowed-signers file (`ssh-keygen -Y verify`'s format): only a commit signed by a key in it deploys.
   * @default none (commits are not checked)
   */
  allowedSigners?: string;
  /** Variables added to the run script's and the health check's environment. @default none */
  env?: Record<string, EnvValue>;
  /** A dotenv file (`KEY=value` lines) read at each deploy; its values are added like `env`'s, as secrets. @default none */
  envFile?: string;
  /**
   * A command run at each deploy, before the pull, whose output (`envCommandFormat`) gives variables added like
   * `envFile`'s, as secrets. Never read from the repository's config file. @default none
   */
  envCommand?: string;
  /** How `envCommand` prints its variables: `dotenv` (KEY=value lines) or `json` (an object of strings). @default dotenv */
  envCommandFormat?: EnvCommandFormat;
  /** How long `envCommand` may take before the deploy fails, in milliseconds. @default 30000 */
  envCommandTimeoutMs?: number;
  /** The age identities (`age-keygen`'s file) that open an age-encrypted `envFile`. @default none */
  ageIdentityFile?: string;
  /**
   * Build each deploy in its own release directory under `path` and switch `<path>/current` to it in one step
   * (docs/releases.md). @default none (pull and run in repoPath)
   */
  releases?: ReleaseSettings;
  /**
   * Deploy a commit only once the forge's statuses and check runs named here are success on it (read through the
   * `status` settings' forge and token). Never read from the repository's config file. @default none
   */
  gate?: Partial<GateSettings> & Pick<GateSettings, "checks">;
  /**
   * Limits on the run script, the activate script and a command health check: `memory`, `cpu`, `tasks` through the
   * kernel's cgroups, `nice`, `ioNice`. Never read from the repository's config file. @default none
   */
  limits?: LimitsSettings;
  /** With `releases`: run in `<path>/current` after the switch (a reload of the app). @default none */
  activateScript?: string;
  /** After `health`, watch a Prometheus query or a command; a breach rolls back (docs/watch.md). @default none */
  watch?: WatchSettings;
  /** A running copy of each open pull request (docs/previews.md). Never read from the repository's config file. @default none */
  previews?: PreviewsKey;
  /**
   * Freeze windows: no deploy starts while one holds, unless forced (docs/deploy-control.md "Freeze windows");
   * weekly (`Fri 16:00` → `Mon 08:00`) or dated. Read from the service's own config only. @default none
   */
  freeze?: FreezeWindow[];
  /** When a pause or a freeze ends, deploy the newest push refused during it, once. @default false */
  catchUp?: boolean;
  /**
   * Deploy a push only when the change since the live commit touches a file matching one of these globs (`**`, `*`,
   * `?`, relative to the repository's root). Read from the service's own config only. @default none (every push)
   */
  paths?: string[];
  /**
   * Skip a push whose head commit's message says `[skip deploy]`, `[deploy skip]`, `[skip cd]` or `[no deploy]`
   * (any case); a list replaces those markers. Read from the service's own config only. @default false
   */
  skipMarkers?: boolean | string[];
  /**
   * Deploy a GitHub `deployment` event's commit (for `environment`, a ref that is `branch` or in `deployRefs`), and
   * post that deployment's statuses. @default false
   */
  deploymentEvents?: boolean;
  /** The forge's environment this app deploys: deployment events for another are skipped. @default "production" */
  environment?: string;
  /** With deploymentEvents: only deployments created by these logins deploy. @default anyone */
  deploymentCreators?: string[];
  /** The dashboard's public URL (`https://deploy.example.com/admin`): a deployment status links to a deploy's page. @default none */
  adminPublicUrl?: string;
  /** The deployed app's URL, given to the forge's deployment statuses. @default none */
  environmentUrl?: string;
  /** Multi-app mode: several apps, each with its own host, path, repository, run script and secret. */
  apps?: AppConfig[];
  /**
   * Build slots: at most this many deploys do their work at once across every app of this service directory (and
   * the `service deploy` / `service rollback` run in it); 0: no limit. @default the CPUs of the machine, at least 2
   */
  maxConcurrentDeploys?: number;
  /** Port of the admin listener (`/healthz`, `/metrics`, `/api/`); unset: no admin listener. @default none */
  adminPort?: number;
  /** Address of the admin listener. @default "127.0.0.1" */
  adminHostname?: string;
  /** Token of the admin API. @default generated and stored in `.service/admin.token` */
  adminToken?: string;
  /**
   * Tokens of the admin listener scoped to a role and apps, each read from its file (`{ name, role, apps?, file }`,
   * checked by tokens/list.ts). @default none
   */
  tokens?: Record<string, unknown>[];
  /** The MCP endpoint for agents at `POST /mcp` of the admin listener (docs/agents.md); unset: none. @default none */
  adminMcp?: McpMode;
  /** The audit trail (docs/audit.md): `keepDays`. @default { keepDays: 365 } */
  audit?: AuditSettings;
  /** Sign in to the dashboard with an OpenID provider (docs/admin.md "People"). @default none */
  adminOidc?: OidcSettings;
  /** The user a trusted proxy names in a header (docs/admin.md "People"). @default none */
  adminTrustedHeader?: TrustedHeaderSettings;
  /** The login page's token form; `false` hides it (people sign in with `adminOidc`). @default true */
  adminTokenLogin?: boolean;
  /** How long a dashboard session lasts after its login, in hours. @default 12 */
  adminSessionHours?: number;
  /** How long a kiosk session of the wall (`/wall?kiosk=1`, a read token) lasts, in days. @default 30 */
  adminKioskDays?: number;
  /**
   * Ask about HTTPS at an interactive start on Linux, until the proxy files are written; `false` never asks (as
   * SERVICE_SKIP_HTTPS_PROMPT=1). @default true
   */
  httpsPrompt?: boolean;
}

/** One entry of `apps`; keys it does not set come from the top level (except `secret`, never inherited). */
export interface AppConfig extends Omit<UserConfig, ServiceKey> {
  name: string;
  /** Host name matched against the request (port stripped, case-insensitive). */
  host: string;
  path: string;
  repoPath: string;
  runScript: string;
}

/** Keys of the service as a whole (its listeners), not of an app: an `apps` entry neither sets nor inherits them. */
export const SERVICE_KEYS = [
  "port",
  "hostname",
  "trustProxy",
  "boundConnections",
  "apps",
  "maxConcurrentDeploys",
  "adminPort",
  "adminHostname",
  "adminToken",
  "tokens",
  "adminMcp",
  "audit",
  "adminOidc",
  "adminTrustedHeader",
  "adminTokenLogin",
  "adminSessionHours",
  "adminKioskDays",
  "httpsPrompt",
] as const;
export type ServiceKey = (typeof SERVICE_KEYS)[number];

/** A config value the service cannot use; the message names the key and where it came from. */
export class ConfigError extends Error {
  override name = "ConfigError";
  /** Each problem on its own (a list of apps can have several); the message is them, one per line. */
  readonly problems: string[];
  constructor(problems: string | string[]) {
    const list = typeof problems === "string" ? [problems] : problems;
    super(list.join("\n"));
    this.problems = list;
  }
}
