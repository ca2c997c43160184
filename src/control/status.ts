import type { ResolvedApp } from "../config/apps.ts";
import { freezeAt, nextFreeze, type Freeze } from "../config/freeze.ts";
import { beforeFirstDeploy, leftLive, ofApp, tagOf } from "../history/live.ts";
import type { CommitInfo } from "../types.ts";
import { commitInfos } from "../system/commit-infos.ts";
import { headCommit } from "../system/git.ts";
import { processAlive } from "../system/liveness.ts";
import { isActiveHere } from "../history/open-records.ts";
import { lastResume, pauseOf, type Pause, type Resume } from "../queue/pause.ts";
import { readPollState, type PollResult } from "./poll.ts";
import { queueKey, scanTickets, ticketDir } from "../queue/tickets.ts";
import { readSlots, type SlotHolder } from "../queue/slots.ts";
import { listDeploys, resultLabel, readDeployRecord, type HistoryEntry } from "../history/read.ts";
import type { ReleasesView } from "../releases/files.ts";
import { lastSkippedPush, type LastSkipped } from "../triggers/last-skipped.ts";
import { keptRequests } from "../history/requests.ts";
import { type Watching, watchingOf } from "../history/watching.ts";

/**
 * One app's state, as `service status --json`, `server.status()` and the admin listener give it: plain data,
 * read from the files the queue and the logs share, whether or not the server runs.
 */
export interface AppStatus {
  /** The app's name; null in single-app mode. */
  app: string | null;
  repoPath: string;
  /** The live commit (docs/deploy-control.md "What is live"); null when none is known. */
  commit: string | null;
  /** The live commit in words, and the deploy that made it live (null: found checked out, before any deploy). */
  live: LiveCommit | null;
  /** The tag the deploy that made it live deployed (`--ref v1.4.2`, a tag push with `tags`); null when none. */
  liveTag: string | null;
  /** The commit checked out in repoPath (the clone's HEAD); null when there is none. It differs from the live one with releases, and after a deploy that failed in place. */
  checkedOut: string | null;
  /** The pause in force (reason, since, by), or null. */
  paused: Pause | null;
  /** The last lift of this app's pause (the whole service's in single-app mode): who, when, the pause; or null. */
  resumed: Resume | null;
  /** The freeze window in force (docs/deploy-control.md "Freeze windows"): its reason and end; or null. */
  frozen: FreezeStatus | null;
  /** The next freeze window to start: its reason, start and end; or null. */
  nextFreeze: (FreezeStatus & { start: string }) | null;
  /** The deploy running now: its id, how and by whom it was asked for, and since when (ISO). */
  running: {
    id: string;
    trigger: string | null;
    actor: string | null;
    since: string;
    /** What it waits for, when it does: `checks` (at the app's gate: "waiting for checks"). */
    waiting: string | null;
  } | null;
  /** The running deploy's watch (docs/watch.md), null when it does not watch. */
  watching: Watching | null;
  /** Deploys of the repository waiting in its queue. */
  waiting: number;
  /** The service's build slots (the same for every app): how many are in use, the limit (0: none), and who holds them. */
  slots: Slots;
  /** The newest deploy that ended: its id, outcome (as `service logs` says it), end time (ISO) and age in ms. */
  last: { id: string; outcome: string; finishedAt: string; ageMs: number } | null;
  /**
   * Polling (`pollIntervalMs`), null when off: the interval, and the last poll the server recorded (its time,
   * result, the remote's commit, why it failed or skipped, failures in a row), null before the first.
   */
  poll: {
    intervalMs: number;
    last: {
      at: string;
      ageMs: number;
      result: PollResult;
      commit: string | null;
      detail: string | null;
      failures: number;
    } | null;
  } | null;
  /** With `releases` (docs/releases.md): the live release and the kept ones; null without. */
  releases: ReleasesView | null;
  /** The last push skipped for its `paths` or a skip marker: when, why (`paths`, `marker`) and the answer's text. */
  lastSkipped: LastSkipped | null;
  /** The requests a pause or a freeze refused, kept for the catch-up (docs/deploy-control.md "Catch-up"); null: none. */
  catchUp: CatchUpStatus | null;
}

/** What waits for the catch-up: the kept requests, when they deploy (null: at the resume), and one line saying it. */
export interface CatchUpStatus {
  requests: { id: string; trigger: string; actor: string | null; at: string; reason: string | null }[];
  deploysAt: string | null;
  text: string;
}

/** The requests of `app` kept for the catch-up, as `service status`, `GET /api/apps` and the dashboard say them. */
export function catchUpStatus(cwd: string, app: ResolvedApp, now: number): CatchUpStatus | null {
  const kept = keptRequests(cwd, app.name);
  if (kept.length === 0) return null;
  const paused = pauseOf(cwd, app.name);
  const frozen = freezeAt(app.freeze, new Date(now));
  const actors = [...new Set(kept.map((request) => request.actor ?? "someone"))];
  const pushes = kept.every((request) => request.trigger === "webhook" || request.trigger === "poll");
  const what = `${kept.length} ${pushes ? "push" : "request"}${kept.length > 1 ? "es" : ""}`.replace(
    "requestes",
    "requests",
  );
  const during = paused ? "while paused" : frozen ? "during the freeze" : "during a pause or a freeze";
  const when = paused ? "deploys at the resume" : frozen ? `deploys at ${frozen.until}` : "deploys now";
  return {
    requests: kept.map(({ id, trigger, actor, at, reason }) => ({ id, trigger, actor, at, reason: reason ?? null })),
    deploysAt: paused ? null : frozen ? frozen.end.toISOString() : new Date(now).toISOString(),
    text: `${what} by ${actors.join(", ")} refused ${during}: ${when}${kept.length > 1 ? " (the newest; the others are superseded)" : ""}`,
  };
}

/** The build slots of a service directory, as status, the admin API and /metrics give them. */
export interface Slots {
  inUse: number;
  limit: number;
  holders: SlotHolder[];
}

/** The build slots of the service in `cwd` now, across processes (queue/slots.ts). */
export function slotsStatus(cwd: string, limit: number): Slots {
  const { inUse, holders } = readSlots(cwd, limit);
  return { inUse, limit, holders };
}

/** A freeze as status gives it: why, until when as shown in its time zone, and its end (ISO). */
export interface FreezeStatus {
  reason: string;
  until: string;
  end: string;
}

/** The freeze in force for `app` and the next one, as `service status` and the admin API give them. */
export function freezeStatus(app: ResolvedApp, now: number): Pick<AppStatus, "frozen" | "nextFreeze"> {
  const shown = (freeze: Freeze) => ({ reason: freeze.reason, until: freeze.until, end: freeze.end.toISOString() });
  const frozen = freezeAt(app.freeze, new Date(now));
  const next = nextFreeze(app.freeze, new Date(now));
  return {
    frozen: frozen ? shown(frozen) : null,
    nextFreeze: next ? { ...shown(next), start: next.start.toISOString() } : null,
  };
}

/** The live commit in words ("" for words git cannot give), and the deploy that made it live. */
export interface LiveCommit extends CommitInfo {
  deployId: string | null;
  /** Before any deploy left a commit live: the first deploy, which found this commit checked out. */
  beforeDeploy?: string;
}

/**
 * What is live (docs/deploy-control.md "What is live"): with releases, the commit of the release `current` names;
 * in place, the commit of the newest deploy that ended ok or that a rollback returned to, or, before any, the
 * one checked out. Also the clone's HEAD, shown apart.
 */
export async function liveOf(
  app: Pick<ResolvedApp, "name" | "repoPath">,
  history: HistoryEntry[],
  releases: ReleasesView | null,
): Promise<{ commit: string | null; live: LiveCommit | null; liveTag: string | null; checkedOut: string | null }> {
  const checkedOut = await headCommit(app.repoPath, process.env).catch(() => null);
  const deployed = history.find((entry) => ofApp(entry, app.name) && leftLive(entry));
  let live: { sha: string; deployId: string | null; beforeDeploy?: string } | null;
  const first = releases || deployed ? undefined : beforeFirstDeploy(history.filter((entry) => ofApp(entry, app.name)));
  if (releases) live = releases.live?.commit ? { sha: releases.live.commit, deployId: releases.live.deployId } : null;
  else if (deployed?.commit) live = { sha: deployed.commit.sha, deployId: deployed.id };
  else if (first) live = { sha: first.commit.sha, deployId: null, beforeDeploy: first.deployId };
  else live = checkedOut ? { sha: checkedOut, deployId: null } : null;
  if (!live) return { commit: null, live: null, liveTag: null, checkedOut };
  const sha = live.sha;
  const recorded = history.find((entry) => entry.commit?.sha === sha)?.commit;
  const words =
    recorded ??
    (await commitInfos(app.repoPath, [sha], process.env).catch(() => undefined))?.get(sha) ??
    ({ sha, subject: "", author: "", date: "" } satisfies CommitInfo);
  const by = live.deployId ? history.find((entry) => entry.id === live.deployId) : undefined;
  const liveTag = (by && tagOf(by)) ?? null;
  const before = live.beforeDeploy ? { beforeDeploy: live.beforeDeploy } : {};
  return { commit: sha, live: { ...words, sha, deployId: live.deployId, ...before }, liveTag, checkedOut };
}

/** An app's releases, read only when it has them (the module is not loaded otherwise). */
export async function releasesStatus(cwd: string, app: Pick<ResolvedApp, "releases">): Promise<ReleasesView | null> {
  if (!app.releases) return null;
  const { releasesView } = await import("../releases/files.ts");
  return releasesView(app.releases, cwd);
}

/** The apps `name` picks: all of them without a name; throws for a name that is not an app's. */
export function selectApps(apps: ResolvedApp[], name: string | undefined): ResolvedApp[] {
  if (name === undefined) return apps;
  const app = apps.find((a) => a.name === name);
  if (app) return [app];
  if (!apps.some((a) => a.name))
    throw new Error(`--app ${name}: the configuration has no apps (single-app mode); leave out --app`);
  throw new Error(`no app named "${name}" (apps: ${apps.map((a) => a.name).join(", ")})`);
}

/** A deploy whose record says running and whose process still lives (this one, or another). */
function stillRunning(entry: HistoryEntry): boolean {
  if (entry.status !== "running") return false;
  if (isActiveHere(entry.jsonPath)) return true;
  const record = readDeployRecord(entry.jsonPath);
  return typeof record?.pid === "number" && processAlive(record.pid, record.pidStart);
}

/** The status of each app in the service directory `cwd`. */
export async function readStatus(cwd: string, apps: ResolvedApp[], now = Date.now()): Promise<AppStatus[]> {
  const history = listDeploys(cwd);
  const slots = slotsStatus(cwd, apps[0]?.maxConcurrentDeploys ?? 0);
  return Promise.all(apps.map(async (app) => ({ ...(await appStatus(cwd, app, history, now)), slots })));
}

async function appStatus(
  cwd: string,
  app: ResolvedApp,
  history: HistoryEntry[],
  now: number,
): Promise<Omit<AppStatus, "slots">> {
  const mine = history.filter((entry) => (app.name ? entry.app === app.name : true));
  const current = mine.find(stillRunning);
  const ended = mine.find((entry) => entry.status !== "running");
  // The queue's tickets count every process deploying the repository; the running deploy holds one of them.
  const tickets = scanTickets(ticketDir(queueKey(app.repoPath))).live.length;
  const finishedAt = ended && new Date(Date.parse(ended.startedAt) + (ended.durationMs ?? 0)).toISOString();
  const releases = await releasesStatus(cwd, app);
  return {
    app: app.name ?? null,
    repoPath: app.repoPath,
    ...(await liveOf(app, mine, releases)),
    paused: pauseOf(cwd, app.name) ?? null,
    resumed: lastResume(cwd, app.name) ?? null,
    ...freezeStatus(app, now),
    running: current
      ? {
          id: current.id,
          trigger: current.trigger,
          actor: current.actor,
          since: current.startedAt,
          waiting: current.waiting,
        }
      : null,
    watching: watchingOf(current, now),
    waiting: Math.max(0, tickets - (current ? 1 : 0)),
    poll: pollStatus(cwd, app, now),
    releases,
    lastSkipped: lastSkippedPush(cwd, app.name),
    catchUp: catchUpStatus(cwd, app, now),
    last:
      ended && finishedAt
        ? { id: ended.id, outcome: resultLabel(ended), finishedAt, ageMs: Math.max(0, now - Date.parse(finishedAt)) }
        : null,
  };
}

/** An app's polling as `service status` and the admin API give it: null when it does not poll. */
export function pollStatus(cwd: string, app: ResolvedApp, now: number): AppStatus["poll"] {
  if (app.pollIntervalMs === undefined) return null;
  const state = readPollState(cwd, app.name);
  const last = state && {
    at: state.at,
    ageMs: Math.max(0, now - Date.parse(state.at)),
    result: state.result,
    commit: state.commit ?? null,
    detail: state.detail ?? null,
    failures: state.failures,
  };
  return { intervalMs: app.pollIntervalMs, last: last ?? null };
}
