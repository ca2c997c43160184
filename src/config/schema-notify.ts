/**
 * What the `status` and `notify` keys are: the forges, formats and events they name, their shapes and defaults.
 * Their checks are config/notify.ts; the channels that are more than a webhook URL, config/channels.ts.
 */
import { CHANNEL_FORMATS, type ChannelSettings } from "./channels.ts";

export const PROVIDERS = ["github", "gitlab", "gitea", "bitbucket"] as const;
export type Provider = (typeof PROVIDERS)[number];

export const FORMATS = ["json", "slack", "discord", "ntfy", ...CHANNEL_FORMATS] as const;
export type NotifyFormat = (typeof FORMATS)[number];

/** What a deploy can end as, plus its start: the values of `notify[].on`. */
export const NOTIFY_EVENTS = [
  "started",
  "succeeded",
  "failed",
  "rolled_back",
  "cancelled",
  "refused",
  "superseded",
] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];
export const DEFAULT_ON: NotifyEvent[] = ["failed", "rolled_back"];

/** Time limit of one outbound HTTP call. */
export const DEFAULT_OUTBOUND_TIMEOUT_MS = 10_000;

/** Commit statuses on the forge (key `status`, top level or per app). */
export interface StatusSettings {
  /** @default from the host of the `origin` URL when it is a known public host */
  provider?: Provider;
  /** `owner/name` (GitLab: also the numeric project id). @default from the `origin` URL */
  repo?: string;
  /** @default SERVICE_STATUS_TOKEN, or the content of `tokenFile` */
  token?: string;
  tokenFile?: string;
  /** @default the provider's public API */
  apiUrl?: string;
  /** @default `deploy/<app>`, `deploy` in single-app mode */
  context?: string;
  /** A template with `{id}`, `{app}`, `{commit}`. */
  targetUrl?: string;
  /** @default 10000 */
  timeoutMs?: number;
  /** GitHub only: also create a Deployment per deploy and set its statuses. @default false */
  deployments?: boolean;
  /** The Deployment's environment. @default the app's name, or "production" */
  environment?: string;
}

/** One entry of `notify` (the keys of email, telegram, teams, matrix and gotify: channels.ts). */
export interface NotifyTarget extends ChannelSettings {
  /** "" for `email`, which has none. */
  url: string;
  /** @default "json" */
  format?: NotifyFormat;
  /** @default ["failed", "rolled_back"] */
  on?: NotifyEvent[];
  headers?: Record<string, string>;
  /** @default 10000 */
  timeoutMs?: number;
}
