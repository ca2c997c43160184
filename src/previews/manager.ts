/**
 * The previews of a service directory (docs/previews.md "Life cycle"): what a pull request's event becomes (the one
 * dispatch `receive`, whatever the forge), each preview's builds one at a time in its own lane, its teardown, and
 * the sweep at start and hourly (what a restart left, `ttlDays`, PRs closed while the service was down). After each
 * change the routes are written (routes.ts) and the pull request is told (report.ts).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { AuditEvent } from "../audit/entry.ts";
import type { ResolvedApp } from "../config/apps.ts";
import { pauseOf } from "../queue/pause.ts";
import { shown } from "../system/shown.ts";
import type { Logger } from "../system/logger.ts";
import { fetchHead } from "./checkout.ts";
import { headRefusal } from "./head-rules.ts";
import { handEvent } from "./by-hand.ts";
import { withPreviewLock } from "./lock.ts";
import { buildPreview, type LifeContext, teardownPreview } from "./life.ts";
import { freePort, slugOf, urlOf } from "./naming.ts";
import { previewsDir, readPreviews, writePreviews } from "./state.ts";
import { stillRunning } from "./scripts.ts";
import { markerOf } from "./env.ts";
import { authorCheck, judge, type RefusalReason } from "./trust.ts";
import { forgeAsk, pullOpen, targetOf } from "./forge-ask.ts";
import type { Preview, PreviewSettings, PullRequestEvent } from "./types.ts";

/** What the door answers: `[skipped] <text>` for skipped and refused, `[preview] <text>` for accepted. */
export interface PreviewAnswer {
  outcome: "skipped" | "refused" | "accepted";
  text: string;
  reason?: RefusalReason;
}

/** The counters of /metrics (admin/metrics.ts reads them). */
export interface PreviewCounts {
  deploys: Map<string, number>;
  teardowns: Map<string, number>;
  refusals: Map<string, number>;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export type AppWithPreviews = ResolvedApp & { previews: PreviewSettings };

export class Previews {
  /** Each preview's lane: its builds and its teardown, one at a time. */
  private readonly lanes = new Map<string, Promise<void>>();
  private readonly counts: PreviewCounts = { deploys: new Map(), teardowns: new Map(), refusals: new Map() };
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopping = false;
  private building = 0;
  private readonly context: LifeContext;

  constructor(
    private readonly options: {
      cwd: string;
      logger: Logger;
      /** The apps as configured now. */
      apps: () => readonly ResolvedApp[];
      env?: NodeJS.ProcessEnv;
      /** Writes a refusal into the audit trail (docs/audit.md), when the server keeps one. */
      audit?: (event: AuditEvent) => void;
    },
  ) {
    const env = options.env ?? process.env;
    this.context = {
      cwd: options.cwd,
      env,
      logger: options.logger,
      stopped: () => this.stopping,
      building: (delta) => {
        this.building += delta;
        return this.building;
      },
      count: (what, app, outcome) =>
        this.count(what === "deploy" ? this.counts.deploys : this.counts.teardowns, app, outcome),
      settings: () => this.withPreviews().map((app) => app.previews),
      all: () => this.all(),
    };
  }

  /** The counters as they stand. */
  get counters(): Readonly<PreviewCounts> {
    return this.counts;
  }

  private withPreviews(): AppWithPreviews[] {
    return this.options.apps().filter((app): app is AppWithPreviews => Boolean(app.previews));
  }

  /** The names of the apps with previews now. */
  names(): string[] {
    return this.withPreviews().map(nameOf);
  }

  /** Every preview of every app with previews. */
  all(): Preview[] {
    return this.withPreviews().flatMap((app) => readPreviews(this.options.cwd, nameOf(app)).previews);
  }

  private count(map: Map<string, number>, app: string, label: string): void {
    const key = `${app}\0${label}`;
    map.set(key, (map.get(key) ?? 0) + 1);
  }

  /**
   * The one dispatch: a pull request's event for an app with `previews` (any forge's parser makes it) to what
   * happens: a refusal at the door (counted, listed, nothing runs), a teardown, or a build in the preview's lane.
   */
  async receive(app: AppWithPreviews, event: PullRequestEvent): Promise<PreviewAnswer> {
    const { cwd } = this.options;
    const name = nameOf(app);
    const state = readPreviews(cwd, name);
    const existing = state.previews.find((p) => p.number === event.number);
    const ask = forgeAsk(app, cwd, this.context.env, event);
    const verdict = await judge(
      {
        event,
        settings: app.previews,
        ...(app.branch ? { branch: app.branch } : {}),
        ...(existing ? { existing } : {}),
        previews: state.previews,
        ...(pauseOf(cwd, app.name) ? { paused: pauseOf(cwd, app.name)?.reason ?? "" } : {}),
      },
      authorCheck(app.previews.authors, ask),
    );
    if ("ignore" in verdict) return { outcome: "skipped", text: verdict.ignore };
    if ("teardown" in verdict) {
      this.teardown(app, event.number, event.merged ? "merged" : "closed");
      return { outcome: "accepted", text: `pull request #${event.number} closed: its preview is torn down` };
    }
    if ("refuse" in verdict) return this.refuse(app, event, verdict.refuse, verdict.text);
    const fetched = await fetchHead(app.repoPath, event, this.context.env);
    if ("problem" in fetched)
      return this.refuse(app, event, "head", `pull request #${event.number}: ${fetched.problem}`);
    const full = { ...event, head: fetched.head };
    const ruled = await headRefusal(app, full, cwd, this.context.env);
    if (ruled) return this.refuse(app, full, ruled.reason, `pull request #${event.number}: ${ruled.text}`);
    const preview = this.place(app, full, existing, verdict.approvedHead);
    if (!preview)
      return this.refuse(app, event, "max", `pull request #${event.number}: no free port in previews.ports`);
    this.enqueue(app, preview.number, () => buildPreview(this.context, app, preview.number, event.sender));
    return {
      outcome: "accepted",
      text: `pull request #${event.number}: building ${event.head.slice(0, 12)} for ${preview.url}`,
    };
  }

  /** A refusal at the door: counted, kept for `service previews`, said in the log. */
  private refuse(app: AppWithPreviews, event: PullRequestEvent, reason: RefusalReason, text: string): PreviewAnswer {
    const name = nameOf(app);
    this.count(this.counts.refusals, name, reason);
    const state = readPreviews(this.options.cwd, name);
    state.refusals.push({ number: event.number, head: event.head, reason, text, at: new Date().toISOString() });
    writePreviews(this.options.cwd, name, state);
    this.options.logger.info(`previews ${name}: refused: ${shown(text)}`);
    this.options.audit?.({
      actor: `webhook:${event.sender.replace(/[^A-Za-z0-9_.[\]-]/g, "?").slice(0, 100) || "?"}`,
      action: "preview refused",
      app: name,
      target: `#${event.number}`,
      outcome: "refused",
      reason,
    });
    return { outcome: "refused", text, reason };
  }

  /** The preview made or updated for the event's head (status building), or undefined when no port is free. */
  private place(
    app: AppWithPreviews,
    event: PullRequestEvent,
    existing: Preview | undefined,
    approvedHead: string | undefined,
  ): Preview | undefined {
    const { cwd } = this.options;
    const name = nameOf(app);
    const state = readPreviews(cwd, name);
    const now = new Date().toISOString();
    const taken = new Set(
      this.all()
        .filter((p) => p.number !== event.number || p.app !== name)
        .map((p) => p.port),
    );
    const port = existing?.port ?? freePort(app.previews, taken);
    if (port === undefined) return undefined;
    const slug = existing?.slug ?? slugOf(event.branch, event.number, state.previews);
    const preview: Preview = {
      ...(existing ?? {}),
      app: name,
      forge: event.forge,
      number: event.number,
      title: event.title,
      branch: event.branch,
      slug,
      head: event.head,
      ...(approvedHead ? { approvedHead } : existing?.approvedHead ? { approvedHead: existing.approvedHead } : {}),
      port,
      url: urlOf(app.previews, event.number, slug, name),
      dir: join(app.previews.path, `pr-${event.number}`),
      created: existing?.created ?? now,
      updated: now,
      status: "building",
      fetchRef: event.fetchRef,
    };
    state.previews = [...state.previews.filter((p) => p.number !== event.number), preview];
    writePreviews(cwd, name, state);
    return preview;
  }

  /** Runs `task` in the preview's lane, after what is already in it. */
  private enqueue(app: AppWithPreviews, number: number, task: () => Promise<void>): Promise<void> {
    const key = `${nameOf(app)}\0${number}`;
    const locked = () => withPreviewLock(this.options.cwd, nameOf(app), number, () => this.stopping, task);
    const next = (this.lanes.get(key) ?? Promise.resolve()).then(locked).catch((error: Error) => {
      this.options.logger.error(`previews ${nameOf(app)}: pull request #${number}: ${error.message}`);
    });
    this.lanes.set(key, next);
    void next.then(() => {
      if (this.lanes.get(key) === next) this.lanes.delete(key);
    });
    return next;
  }

  /** Tears a preview down in its lane (after a build it may be in). */
  teardown(app: AppWithPreviews, number: number, why: string): Promise<void> {
    return this.enqueue(app, number, () => teardownPreview(this.context, app, number, why));
  }

  /**
   * Deploys an open pull request by hand (`service preview deploy <n>`): its preview's head again, or the head its
   * pull ref has now. Trust is the caller's (a token of the app, or the server's own user).
   */
  async deployByHand(app: AppWithPreviews, number: number, actor: string): Promise<PreviewAnswer> {
    const existing = readPreviews(this.options.cwd, nameOf(app)).previews.find((p) => p.number === number);
    const who = { actor, base: app.branch ?? "" };
    const event = await handEvent(app.repoPath, number, existing, who, this.context.env);
    if ("problem" in event) return { outcome: "refused", text: event.problem };
    const head = event.head;
    const fetched = await fetchHead(app.repoPath, event, this.context.env);
    if ("problem" in fetched) return { outcome: "refused", text: `pull request #${number}: ${fetched.problem}` };
    const preview = this.place(app, event, existing, existing?.approvedHead ? head : undefined);
    if (!preview) return { outcome: "refused", text: `pull request #${number}: no free port in previews.ports` };
    await this.enqueue(app, number, () => buildPreview(this.context, app, number, actor));
    const after = readPreviews(this.options.cwd, nameOf(app)).previews.find((p) => p.number === number);
    return { outcome: "accepted", text: `pull request #${number}: ${after?.status ?? "gone"} at ${preview.url}` };
  }

  /**
   * At start: previews whose processes are gone are `stopped` (not rebuilt); then the sweep, and again hourly.
   */
  start(): void {
    for (const app of this.withPreviews()) {
      const name = nameOf(app);
      mkdirSync(previewsDir(this.options.cwd), { recursive: true, mode: 0o700 });
      const state = readPreviews(this.options.cwd, name);
      let changed = false;
      for (const p of state.previews) {
        if (p.status !== "running" && p.status !== "building") continue;
        if (p.status === "running" && stillRunning(p.groups ?? [], markerOf(p))) continue;
        p.status = "stopped";
        p.reason = "its processes were gone after a restart: the next push or `service preview deploy` brings it back";
        changed = true;
      }
      if (changed) writePreviews(this.options.cwd, name, state);
    }
    const sweep = () =>
      this.sweep().catch((error: Error) => this.options.logger.error(`previews: the sweep failed: ${error.message}`));
    void sweep();
    this.timer = setInterval(() => void sweep(), HOUR_MS);
    this.timer.unref?.();
  }

  /** Tears down what expired (`ttlDays`), what a closed PR left, and retries a failed teardown. */
  async sweep(now = Date.now()): Promise<void> {
    for (const app of this.withPreviews()) {
      const target = await targetOf(app, this.options.cwd, this.context.env);
      for (const p of readPreviews(this.options.cwd, nameOf(app)).previews) {
        if (this.stopping) return;
        const expired = now - Date.parse(p.updated) > app.previews.ttlDays * DAY_MS;
        if (p.status === "teardown failed") void this.teardown(app, p.number, "retry");
        else if (expired) void this.teardown(app, p.number, "expired");
        else if (target && (await pullOpen(target, p.number)) === false) void this.teardown(app, p.number, "closed");
      }
    }
  }

  /** Stops the sweep and waits for the builds and teardowns under way. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await Promise.all([...this.lanes.values()]);
  }
}

/** The app's name in the previews' files: `default` in single-app mode. */
export const nameOf = (app: Pick<ResolvedApp, "name">) => app.name ?? "default";
