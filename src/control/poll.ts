import { resolve } from "node:path";
import type { ResolvedApp } from "../config/apps.ts";
import { listDeploys, readDeployRecord, type HistoryEntry } from "../history/read.ts";
import { headCommit, lsRemote, short } from "../system/git.ts";
import { pollTarget } from "./poll-target.ts";
import { liveCommitOf } from "../history/live.ts";
import { ensurePrivateDir, readNoFollow, writeFileAtomic } from "../system/files.ts";
import type { Logger } from "../system/logger.ts";
import { pauseOf } from "../queue/pause.ts";
import { keepForCatchUp } from "../deploy/request.ts";
import { freezeOf, frozenText } from "../deploy/frozen.ts";
import { decidePush, decidesPushes } from "../triggers/decide.ts";
import type { TriggerSkip } from "../triggers/types.ts";
import type { RollbackTarget } from "../types.ts";

/**
 * Polling: for servers a forge cannot reach, and for deliveries a forge dropped. Each app with `pollIntervalMs`
 * asks its remote for the branch's commit (`git ls-remote`) and queues a deploy (`trigger: "poll"`) when the
 * commit is new: not HEAD, and not one a deploy of any trigger already pulled (a failed deploy is not retried at
 * every interval, and a rollback, manual or automatic, stays until a new commit is pushed). The last poll of
 * each app is kept in `.service/poll/<app>.json` for `service status`.
 */
export const POLL_DIR = "poll";

/** How a poll ended, as the metric `service_polls_total{result}` and the state file name it. */
export type PollResult = "deployed" | "unchanged" | "skipped" | "failed";

/** Longest wait between two polls of a failing remote. */
const MAX_BACKOFF_MS = 10 * 60_000;
/** Each wait is the interval plus up to this share of it at random: many servers do not ask at the same instant. */
const JITTER = 0.1;
/** How long one `git ls-remote` may take. */
const LS_REMOTE_TIMEOUT_MS = 30_000;

/** The last poll of an app, as written to its state file. */
export interface PollState {
  intervalMs: number;
  /** When the last poll ended (ISO), and how. */
  at: string;
  result: PollResult;
  /** The remote's commit of the polled branch, when the poll got it. */
  commit?: string;
  /** Why the last poll failed or skipped. */
  detail?: string;
  /** The last remote commit a deploy (of any trigger) tried: not deployed again by a poll, even after a restart. */
  tried?: string;
  /** Polls failed in a row. */
  failures: number;
  /** The wait before the next poll: the interval (plus jitter), doubled after each failure. */
  nextInMs: number;
}

export interface PollerOptions {
  cwd: string;
  logger: Logger;
  /** The apps in force; read again at every poll, so a reload applies at the next one. */
  apps(): ResolvedApp[];
  /** Whether a deploy of the app runs or waits: no poll then. */
  busy(app: ResolvedApp): boolean;
  /**
   * Queues a deploy of the app with trigger "poll": of a tag with `tags`, with the files that matched with `paths`;
   * throws when the queue refuses it.
   */
  deploy(app: ResolvedApp, asked?: { target?: RollbackTarget; paths?: { matched: string[] } }): void;
  /** Each poll's result, for the metrics. */
  counted(app: string, result: PollResult): void;
  /** A remote commit not deployed for its paths or a skip marker (triggers/), counted once per commit. */
  skippedPush?(app: string, reason: TriggerSkip["reason"]): void;
  /** Internal, for tests: poll this often whatever `pollIntervalMs` says (the key's minimum is 5000). */
  everyMs?: number;
}

const nameOf = (app: ResolvedApp) => app.name ?? "default";
const stateFile = (cwd: string, app: string) => resolve(cwd, ".service", POLL_DIR, `${app}.json`);

/** The last poll of `app` as the server recorded it; undefined when it never polled (or the file is unreadable). */
export function readPollState(cwd: string, app: string | undefined): PollState | undefined {
  try {
    const state = JSON.parse(readNoFollow(stateFile(cwd, app ?? "default"))) as PollState;
    return state && typeof state.at === "string" && typeof state.result === "string" ? state : undefined;
  } catch {
    return undefined;
  }
}

/** The two git queries a poll target is found from (the same for the server and for `service check`). */
interface Loop {
  timer?: ReturnType<typeof setTimeout>;
  state?: PollState;
  /** The last remote commit a deploy tried (see PollState). */
  tried?: string;
  /** The state file could not be written: said once, not at every poll. */
  unwritable?: boolean;
  /** The last remote commit skipped for its paths or a marker, and why: not fetched and counted again. */
  skipped?: { commit: string; text: string };
}

/** One loop per app that has `pollIntervalMs`; apps added or changed by a reload are picked up within a minute. */
export class Poller {
  private readonly loops = new Map<string, Loop>();
  private sync?: ReturnType<typeof setInterval>;
  private stopped = true;

  constructor(private readonly options: PollerOptions) {}

  start(): void {
    this.stopped = false;
    this.refresh();
    this.sync = setInterval(() => this.refresh(), Math.min(60_000, this.options.everyMs ?? 60_000));
    this.sync.unref?.();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.sync);
    for (const loop of this.loops.values()) clearTimeout(loop.timer);
    this.loops.clear();
  }

  /** Starts the loop of each app that polls; a loop whose app no longer polls ends at its next turn. */
  private refresh(): void {
    if (this.stopped) return;
    for (const app of this.options.apps()) {
      if (app.pollIntervalMs === undefined || this.loops.has(nameOf(app))) continue;
      const loop: Loop = { tried: readPollState(this.options.cwd, app.name)?.tried };
      this.loops.set(nameOf(app), loop);
      this.schedule(nameOf(app), loop, 0);
    }
  }

  private schedule(name: string, loop: Loop, delayMs: number): void {
    // A turn that ends after a stop (or a stop and a new start) belongs to no loop any more.
    if (this.stopped || this.loops.get(name) !== loop) return;
    loop.timer = setTimeout(() => void this.turn(name, loop), delayMs);
    loop.timer.unref?.();
  }

  private async turn(name: string, loop: Loop): Promise<void> {
    const app = this.options.apps().find((a) => nameOf(a) === name);
    if (this.stopped || this.loops.get(name) !== loop) return;
    if (!app?.pollIntervalMs) {
      this.loops.delete(name);
      return;
    }
    const interval = this.options.everyMs ?? app.pollIntervalMs;
    const before = loop.state?.failures ?? 0;
    let outcome: Omit<PollState, "at" | "intervalMs" | "failures" | "nextInMs">;
    try {
      outcome = await this.poll(app, loop);
      if (before > 0) this.options.logger.info(`polling of ${label(app)} works again after ${before} failed poll(s)`);
    } catch (error) {
      outcome = { result: "failed", detail: (error as Error).message };
      if (before === 0)
        this.options.logger.warn(
          `polling of ${label(app)} fails: ${outcome.detail}; trying again with a growing wait (at most ${MAX_BACKOFF_MS / 60_000} min), logged again when it works`,
        );
    }
    const failures = outcome.result === "failed" ? before + 1 : 0;
    // A failing remote is asked twice as late each time: a down forge is not hammered by every server.
    const wait = Math.min(MAX_BACKOFF_MS, interval * 2 ** Math.min(failures, 20));
    const nextInMs = Math.round(wait * (1 + Math.random() * JITTER));
    this.record(app, loop, { ...outcome, failures, nextInMs });
    this.schedule(name, loop, nextInMs);
  }

  /** One poll; throws when the remote cannot be asked. */
  private async poll(
    app: ResolvedApp,
    loop: Loop,
  ): Promise<Omit<PollState, "at" | "intervalMs" | "failures" | "nextInMs">> {
    const { cwd } = this.options;
    const paused = pauseOf(cwd, app.name);
    const frozen = paused ? undefined : freezeOf({ config: app });
    // A poll stands for a push: with catchUp, the end of the pause or freeze deploys what it would have.
    if (paused || frozen) {
      const why = frozen ? frozenText(frozen) : `deploys are paused: ${paused!.reason}`;
      keepForCatchUp({ app: app.name, config: app, trigger: "poll", actor: "poll", cwd }, why);
    }
    if (paused) return { result: "skipped", detail: `paused: ${paused.reason}` };
    if (frozen) return { result: "skipped", detail: frozenText(frozen) };
    if (this.options.busy(app)) return { result: "skipped", detail: "a deploy runs or waits" };
    if (app.tags) return this.pollTags(app, loop);
    const target = await pollTarget(app.repoPath, app.branch);
    if (typeof target === "string") throw new Error(target);
    const commit = await lsRemote(app.repoPath, target.remote, target.ref, process.env, LS_REMOTE_TIMEOUT_MS);
    if (!commit) throw new Error(`the remote ${target.remote} has no ${target.ref}`);
    // Looked at again after the remote answered: a webhook's deploy may have started meanwhile.
    if (this.options.busy(app)) return { result: "skipped", commit, detail: "a deploy runs or waits" };
    // The service may have begun to stop while the remote answered: it takes no new deploy then.
    if (this.stopped) return { result: "skipped", commit, detail: "the service is stopping" };
    const head = await headCommit(app.repoPath, process.env);
    if (commit === head) return { result: "unchanged", commit };
    if (commit !== loop.tried) {
      // A commit a webhook or `service deploy` pulled and that was rolled back since is not new either.
      if (!deployThatPulled(cwd, app, commit)) {
        if (loop.skipped?.commit === commit) return { result: "skipped", commit, detail: loop.skipped.text };
        // paths and skip markers: the tip fetched into a private ref, looked at as a webhook's push would be.
        const decision = decidesPushes(app)
          ? await decidePush(cwd, app, undefined, { fetch: true, logger: this.options.logger })
          : {};
        if (decision.skip) {
          loop.skipped = { commit, text: decision.skip.text };
          this.options.skippedPush?.(nameOf(app), decision.skip.reason);
          return { result: "skipped", commit, detail: decision.skip.text };
        }
        if (this.stopped) return { result: "skipped", commit, detail: "the service is stopping" };
        this.options.deploy(app, decision.paths ? { paths: decision.paths } : undefined);
        loop.tried = commit;
        return { result: "deployed", commit };
      }
      loop.tried = commit;
    }
    const at = head ? `HEAD stays at ${short(head)}` : "HEAD stays";
    return { result: "unchanged", commit, detail: `${short(commit)} was deployed already; ${at} until a new push` };
  }

  /**
   * A poll of an app with `tags`: the remote's highest matching tag (triggers/tags.ts) deploys when its commit is
   * new, by the same rules as a branch's (not live, not tried, not pulled by an earlier deploy).
   */
  private async pollTags(
    app: ResolvedApp,
    loop: Loop,
  ): Promise<Omit<PollState, "at" | "intervalMs" | "failures" | "nextInMs">> {
    const { tagTrigger } = await import("../triggers/tags.ts");
    const decision = await tagTrigger(this.options.cwd, { ...app, tags: app.tags! }, undefined, process.env);
    if ("skip" in decision) return { result: "skipped", detail: decision.skip.text };
    const { commit, tag } = decision.target;
    if (this.options.busy(app)) return { result: "skipped", commit, detail: "a deploy runs or waits" };
    if (this.stopped) return { result: "skipped", commit, detail: "the service is stopping" };
    const live = liveCommitOf(this.options.cwd, app.name)?.sha ?? (await headCommit(app.repoPath, process.env));
    if (commit === live) return { result: "unchanged", commit, detail: `tag ${tag} is live` };
    if (commit === loop.tried || deployThatPulled(this.options.cwd, app, commit)) {
      loop.tried = commit;
      return { result: "unchanged", commit, detail: `tag ${tag} (${short(commit)}) was deployed already` };
    }
    this.options.deploy(app, { target: decision.target });
    loop.tried = commit;
    return { result: "deployed", commit, detail: `tag ${tag}` };
  }

  private record(app: ResolvedApp, loop: Loop, outcome: Omit<PollState, "at" | "intervalMs">): void {
    const state: PollState = {
      intervalMs: app.pollIntervalMs!,
      at: new Date().toISOString(),
      ...outcome,
      ...(loop.tried ? { tried: loop.tried } : {}),
    };
    loop.state = state;
    this.options.counted(nameOf(app), state.result);
    try {
      ensurePrivateDir(resolve(this.options.cwd, ".service", POLL_DIR));
      writeFileAtomic(stateFile(this.options.cwd, nameOf(app)), `${JSON.stringify(state, null, 2)}\n`);
      loop.unwritable = false;
    } catch (error) {
      // Only `service status` reads it: polling goes on without it.
      if (!loop.unwritable)
        this.options.logger.warn(`cannot write the poll state of ${label(app)}: ${(error as Error).message}`);
      loop.unwritable = true;
    }
  }
}

/** The newest ended deploy of `app` (any trigger) that pulled `commit`, read only when the remote's commit is not HEAD. */
function deployThatPulled(cwd: string, app: ResolvedApp, commit: string): HistoryEntry | undefined {
  return listDeploys(cwd).find((entry) => {
    if ((entry.app ?? undefined) !== app.name || entry.status === "running" || entry.status === "corrupt") return false;
    const result = readDeployRecord(entry.jsonPath)?.result as { pull?: { after?: unknown } } | undefined;
    return result?.pull?.after === commit;
  });
}

const label = (app: ResolvedApp) => (app.name ? `app "${app.name}"` : app.repoPath);
