/**
 * Whether a push deploys, for an app with `paths` or `skipMarkers` (docs/configuration.md): a skip marker in the
 * pushed head commit's message (no git needed when the payload carries it), then the paths the change touches since
 * the live commit (a fetch of the tip into a private ref, tip.ts). A push that does not deploy is remembered for
 * `service status` (last-skipped.ts). Anything git cannot tell deploys: the deploy then says what is wrong.
 */
import { leftLive, ofApp } from "../history/live.ts";
import { newestDeploys } from "../history/read.ts";
import type { Logger } from "../system/logger.ts";
import { short } from "../system/git.ts";
import { rememberSkippedPush } from "./last-skipped.ts";
import { markerIn, markersOf } from "./markers.ts";
import { matchingFiles } from "./paths.ts";
import { changedFiles, fetchTip, messageOf } from "./tip.ts";
import type { TriggerSkip } from "./types.ts";

/** Most matched files a deploy's record keeps. */
export const MAX_MATCHED = 20;

/** The settings a decision reads. */
export interface TriggerApp {
  name?: string;
  repoPath: string;
  branch?: string;
  paths?: string[];
  skipMarkers?: boolean | string[];
}

/** What was decided: a skip, or what a deploy of it records (`paths.matched`). */
export interface TriggerDecision {
  skip?: TriggerSkip;
  paths?: { matched: string[] };
}

/** Whether an app decides anything at all: without `paths` and `skipMarkers` every push deploys, with no git call. */
export const decidesPushes = (app: TriggerApp) => Boolean(app.paths?.length || markersOf(app.skipMarkers).length);

/**
 * The decision on a push of `app`. `head` is the pushed head commit's message as the delivery carried it (none from
 * curl and the poller: then, when a tip is fetched, its own message is looked at).
 */
export async function decidePush(
  cwd: string,
  app: TriggerApp,
  head: { message: string; commit?: string } | undefined,
  options: { logger?: Logger; env?: NodeJS.ProcessEnv; fetch?: boolean } = {},
): Promise<TriggerDecision> {
  const decision = await decide(cwd, app, head, options);
  if (decision.skip) rememberSkippedPush(cwd, app.name, decision.skip);
  return decision;
}

async function decide(
  cwd: string,
  app: TriggerApp,
  head: { message: string; commit?: string } | undefined,
  { logger, env = process.env, fetch }: { logger?: Logger; env?: NodeJS.ProcessEnv; fetch?: boolean },
): Promise<TriggerDecision> {
  const markers = markersOf(app.skipMarkers);
  const said = (message: string, commit: string | undefined): TriggerSkip | undefined => {
    const marker = markerIn(message, markers);
    return marker ? { reason: "marker", text: `commit ${short(commit ?? null)} says ${marker}` } : undefined;
  };
  if (head) {
    const skip = said(head.message, head.commit);
    if (skip) return { skip };
  }
  const globs = app.paths ?? [];
  // The tip is fetched only when something needs it: the paths, or a marker the delivery did not carry.
  if (globs.length === 0 && !(fetch && !head && markers.length > 0)) return {};
  const fetched = await fetchTip(app, env);
  if ("error" in fetched) {
    logger?.warn(`${label(app)}: ${fetched.error}; the push deploys, its paths and markers unread`);
    return {};
  }
  const { tip } = fetched;
  if (!head && markers.length > 0) {
    const message = await messageOf(app.repoPath, tip, env);
    const skip = message === undefined ? undefined : said(message, tip);
    if (skip) return { skip };
  }
  if (globs.length === 0) return {};
  const live = newestDeploys(cwd, 1, (entry) => ofApp(entry, app.name) && leftLive(entry))[0];
  // No deploy of the app on record: nothing tells what is live, so it deploys.
  if (!live?.commit) return {};
  const files = await changedFiles(app.repoPath, live.commit.sha, tip, env);
  if (!files) {
    logger?.warn(`${label(app)}: git diff ${short(live.commit.sha)} ${short(tip)} failed; the push deploys`);
    return {};
  }
  const matched = matchingFiles(files, globs);
  if (matched.length > 0) return { paths: { matched: matched.slice(0, MAX_MATCHED) } };
  return {
    skip: {
      reason: "paths",
      text: `no change under ${globs.join(", ")} since ${short(live.commit.sha)} (deploy ${live.id.slice(0, 8)})`,
    },
  };
}

const label = (app: TriggerApp) => (app.name ? `app "${app.name}"` : app.repoPath);
