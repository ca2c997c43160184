/**
 * Where a forge's delivery meets previews (docs/previews.md "Events"): for an app with `previews`, a pull request's
 * event of any forge becomes a PullRequestEvent (one parser per forge, each one line of PARSERS) and goes to the
 * one dispatch (manager.ts `receive`); GitHub's own `deployment` events of a preview environment are skipped.
 * Anything else is not previews' and goes on as before.
 */
import type { ResolvedApp } from "../config/apps.ts";
import { type PreviewDelivery, previewDelivery } from "./events.ts";
import type { ParsedPullRequest } from "./event-fields.ts";
import { GITLAB_MERGE_REQUEST_HOOK, parseGitlabMergeRequest } from "./events-gitlab.ts";
import { parseBitbucketPullRequest } from "./events-bitbucket.ts";
import { type AppWithPreviews, type PreviewAnswer, Previews } from "./manager.ts";
import type { Logger } from "../system/logger.ts";
import type { AuditEvent } from "../audit/entry.ts";
import { NO_USER_WARNING } from "./check.ts";

type Payload = Record<string, unknown>;

/** What the webhook asks: the answer to a delivery that is previews', or undefined. */
export type PreviewEntrance = (
  app: ResolvedApp,
  headers: Headers,
  payload: Payload | undefined,
) => Promise<PreviewAnswer | undefined>;

type Parser = (headers: Headers, payload: Payload | undefined) => PreviewDelivery;

/** A parser asked only of the deliveries its forge's header names: any other goes on to the next, or as before. */
const only =
  (is: (headers: Headers) => boolean, parse: (headers: Headers, payload: Payload | undefined) => ParsedPullRequest) =>
  (headers: Headers, payload: Payload | undefined): PreviewDelivery => {
    if (!is(headers)) return undefined;
    const parsed = parse(headers, payload);
    return "event" in parsed ? parsed : { skip: parsed.skip, kind: "ignored" };
  };

/** The parsers of each forge's pull request deliveries, asked in order: the first that knows the delivery answers. */
const PARSERS: Parser[] = [
  previewDelivery,
  only((headers) => headers.get("x-gitlab-event")?.trim() === GITLAB_MERGE_REQUEST_HOOK, parseGitlabMergeRequest),
  only((headers) => (headers.get("x-event-key") ?? "").trim().startsWith("pullrequest:"), parseBitbucketPullRequest),
];

/** The previews of a server: its entrance for the webhook, and the manager the CLI and the admin API use. */
export interface PreviewDoor {
  manager: Previews;
  entrance: PreviewEntrance;
  /** Where the server's lines go: what an action asked through the admin API says when it ends badly. */
  logger: Logger;
  stop(): Promise<void>;
}

/** Starts the previews of a server (the sweep of what a restart left) and returns its door. */
export function openPreviews(options: {
  cwd: string;
  logger: Logger;
  apps: () => readonly ResolvedApp[];
  audit?: (event: AuditEvent) => void;
}): PreviewDoor {
  for (const app of options.apps())
    if (app.previews && !app.previews.user)
      options.logger.warn(`${app.name ? `app "${app.name}": ` : ""}${NO_USER_WARNING}`);
  const manager = new Previews(options);
  manager.start();
  return {
    manager,
    entrance: (app, headers, payload) => entrance(manager, app, headers, payload),
    logger: options.logger,
    stop: () => manager.stop(),
  };
}

async function entrance(
  manager: Previews,
  app: ResolvedApp,
  headers: Headers,
  payload: Payload | undefined,
): Promise<PreviewAnswer | undefined> {
  if (!app.previews) return undefined;
  for (const parse of PARSERS) {
    const delivery = parse(headers, payload);
    if (!delivery) continue;
    if ("skip" in delivery) return { outcome: "skipped", text: delivery.skip };
    return manager.receive(app as AppWithPreviews, delivery.event);
  }
  return undefined;
}
