import pkg from "../../package.json" with { type: "json" };
import { outcomeOf } from "../history/record.ts";
import type { DeployResult, DeploySink, Outcome, Trigger, Unrun } from "../types.ts";
import type { PollResult } from "../control/poll.ts";
import type { TriggerSkip } from "../triggers/types.ts";
import type { Slots } from "../control/status.ts";

/** How a deploy ended, as the metrics name it; `skipped`: a delivery that deployed nothing. */
export type CountedOutcome = Outcome | "skipped";

/** Upper bounds of the deploy duration histogram, in seconds: from a quick restart to a long build. */
const DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600];

export interface RunningDeploy {
  id: string;
  trigger: Trigger;
  actor: string | null;
  since: string;
  /** What it waits for now (`checks`: at its gate), null otherwise. */
  waiting: string | null;
  /** The phase it is in now (`pull`, `run`, `health` …: deploy/phases.ts), null before the first. */
  phase: string | null;
}

/** The steps that are a running deploy's phase (as deploy/phases.ts names them, `switch` apart). */
const PHASES = new Set(["slot", "gate", "pull", "verify", "release", "run", "health", "rollback", "watch"]);

/** The counters of this process since it started; labels are app names from the configuration and HTTP statuses. */
export class Metrics {
  private readonly webhooks = new Map<string, number>();
  private readonly deploys = new Map<string, number>();
  private readonly durations = new Map<string, { buckets: number[]; sum: number; count: number }>();
  private readonly last = new Map<string, number>();
  private readonly polls = new Map<string, number>();
  private readonly gates = new Map<string, number>();
  private readonly kills = new Map<string, number>();
  private readonly frozen = new Map<string, number>();
  private readonly catchUps = new Map<string, number>();
  private readonly refusals = new Map<string, number>();
  private readonly skippedPushes = new Map<string, number>();
  private readonly tokenRefusals = new Map<string, number>();
  private readonly notifications = new Map<string, number>();
  private readonly breaches = new Map<string, number>();
  /** The apps whose deploy watches now (docs/watch.md). */
  private readonly watching = new Set<string>();
  /** The deploy each app runs now, from its `start` event to its `done` event. */
  readonly running = new Map<string, RunningDeploy>();

  webhookRequest(app: string, status: number): void {
    bump(this.webhooks, labels({ app, status: String(status) }));
  }

  /** A deploy that ended, or a request that was answered "skipped" (it never became a deploy). */
  deployEnded(app: string, outcome: CountedOutcome, durationMs?: number): void {
    bump(this.deploys, labels({ app, outcome }));
    this.last.set(labels({ app, outcome }), Date.now() / 1000);
    if (durationMs === undefined) return;
    const seconds = durationMs / 1000;
    const histogram = this.durations.get(app) ?? { buckets: DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 };
    DURATION_BUCKETS.forEach((bound, i) => {
      if (seconds <= bound) histogram.buckets[i]!++;
    });
    histogram.sum += seconds;
    histogram.count++;
    this.durations.set(app, histogram);
  }

  /** A poll of the app's remote that ended (see poll.ts). */
  pollEnded(app: string, result: PollResult): void {
    bump(this.polls, labels({ app, result }));
  }

  /** A deploy refused by a freeze window (a webhook request, an API call). */
  frozenRefused(app: string): void {
    bump(this.frozen, labels({ app }));
  }

  /** A request a token's scope does not allow (403), by the token's name (`admin` never is). */
  tokenRefused(token: string): void {
    bump(this.tokenRefusals, labels({ token }));
  }

  /** A catch-up deploy queued after a pause or a freeze. */
  caughtUp(app: string): void {
    bump(this.catchUps, labels({ app }));
  }

  /** A push that did not deploy, by why (triggers/types.ts `TriggerSkip`: paths, marker, tag, environment). */
  skippedPush(app: string, reason: TriggerSkip["reason"]): void {
    bump(this.skippedPushes, labels({ app, reason }));
  }

  /** A notification that was sent, or failed after its tries, by app and format (email, slack…). */
  notified(app: string, format: string, ok: boolean): void {
    bump(this.notifications, labels({ app, format, outcome: ok ? "sent" : "failed" }));
  }

  /** `sink` wrapped so the counters hear every deploy of `app` start and end. */
  observe(app: string, sink: DeploySink | undefined): DeploySink {
    return (event) => {
      if (event.type === "start")
        this.running.set(app, {
          id: event.id,
          trigger: event.trigger,
          actor: event.actor ?? null,
          since: event.startedAt.toISOString(),
          waiting: null,
          phase: null,
        });
      if ((event.type === "step" || event.type === "output") && PHASES.has(event.step)) {
        const running = this.running.get(app);
        if (running) running.phase = event.step;
      }
      if (event.type === "waiting") {
        const running = this.running.get(app);
        if (running) running.waiting = event.for;
      }
      // The watch after the health check (docs/watch.md): from its first line to its last.
      if (event.type === "step" && event.step === "watch") {
        if (event.text.startsWith("watching for ")) this.watching.add(app);
        else if (/^(passed|breach|ended|not finished)/.test(event.text)) this.watching.delete(app);
      }
      if (event.type === "done") {
        if (this.running.get(app)?.id === event.result.id) this.running.delete(app);
        this.watching.delete(app);
        // A refused or superseded request is no deploy: counted apart, by why.
        if (event.outcome) bump(this.refusals, labels({ app, reason: refusalKind(event.result, event.outcome) }));
        else this.deployEnded(app, outcomeOf(event.result, event.cancelled), event.result.durationMs);
        const { gate, killedBy, watch } = event.result;
        if (watch?.breach)
          bump(
            this.breaches,
            labels({ app, action: event.result.rolledBack ? "rolled_back" : event.result.ok ? "notified" : "failed" }),
          );
        if (killedBy) bump(this.kills, labels({ app, limit: killedBy }));
        if (gate && gate.outcome !== "skipped" && gate.outcome !== "cancelled")
          bump(this.gates, labels({ app, outcome: gate.outcome }));
      }
      sink?.(event);
    };
  }

  /**
   * Prometheus text format 0.0.4; `waiting` and `paused` are each configured app's now, `slots` the service's. With
   * `only` (a token scoped to apps), the counters of those apps and of that token alone.
   */
  render(apps: { name: string; waiting: number; paused: boolean }[], slots?: Slots, only?: Only): string {
    const out: string[] = [];
    const shown = only ? (key: string) => shownTo(only, key) : () => true;
    const family = (name: string, type: string, help: string) =>
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    family("service_info", "gauge", "The running service; its version is a label.");
    out.push(`service_info${labels({ version: pkg.version })} 1`);
    family(
      "service_webhook_requests_total",
      "counter",
      "Webhook requests answered, by app and HTTP status (app empty: no route matched).",
    );
    for (const [key, n] of this.webhooks) if (shown(key)) out.push(`service_webhook_requests_total${key} ${n}`);
    family("service_deploys_total", "counter", "Deploys ended, by app and outcome.");
    for (const [key, n] of this.deploys) if (shown(key)) out.push(`service_deploys_total${key} ${n}`);
    family("service_deploy_duration_seconds", "histogram", "How long deploys took.");
    for (const [app, h] of this.durations) {
      if (only && !only.app(app)) continue;
      DURATION_BUCKETS.forEach((bound, i) => {
        out.push(`service_deploy_duration_seconds_bucket${labels({ app, le: String(bound) })} ${h.buckets[i]}`);
      });
      out.push(`service_deploy_duration_seconds_bucket${labels({ app, le: "+Inf" })} ${h.count}`);
      out.push(
        `service_deploy_duration_seconds_sum${labels({ app })} ${h.sum}`,
        `service_deploy_duration_seconds_count${labels({ app })} ${h.count}`,
      );
    }
    family("service_deploys_running", "gauge", "Deploys running now.");
    for (const { name } of apps)
      out.push(`service_deploys_running${labels({ app: name })} ${this.running.has(name) ? 1 : 0}`);
    family("service_deploys_waiting", "gauge", "Deploys waiting in the queue.");
    for (const { name, waiting } of apps) out.push(`service_deploys_waiting${labels({ app: name })} ${waiting}`);
    if (slots) {
      family(
        "service_build_slots_in_use",
        "gauge",
        "Build slots held now, by every process of this service directory.",
      );
      out.push(`service_build_slots_in_use ${slots.inUse}`);
      family("service_build_slots_limit", "gauge", "Build slots of the service (maxConcurrentDeploys; 0: no limit).");
      out.push(`service_build_slots_limit ${slots.limit}`);
    }
    family("service_deploys_waiting_for_slot", "gauge", "1 while a deploy of the app waits for a build slot.");
    for (const { name } of apps)
      out.push(
        `service_deploys_waiting_for_slot${labels({ app: name })} ${this.running.get(name)?.waiting === "slot" ? 1 : 0}`,
      );
    family("service_last_deploy_timestamp_seconds", "gauge", "When the last deploy of each outcome ended (Unix time).");
    for (const [key, at] of this.last) if (shown(key)) out.push(`service_last_deploy_timestamp_seconds${key} ${at}`);
    family(
      "service_polls_total",
      "counter",
      "Polls of the remote, by app and result (deployed, unchanged, skipped, failed).",
    );
    for (const [key, n] of this.polls) if (shown(key)) out.push(`service_polls_total${key} ${n}`);
    family("service_gate_waiting", "gauge", "1 while a deploy of the app waits at its gate for the forge's checks.");
    for (const { name } of apps)
      out.push(`service_gate_waiting${labels({ app: name })} ${this.running.get(name)?.waiting === "checks" ? 1 : 0}`);
    family(
      "service_deploy_watching",
      "gauge",
      "1 while a deploy of the app watches after its health check (docs/watch.md).",
    );
    for (const { name } of apps)
      out.push(`service_deploy_watching${labels({ app: name })} ${this.watching.has(name) ? 1 : 0}`);
    family(
      "service_watch_breaches_total",
      "counter",
      "Watches that breached, by app and what followed (rolled_back, notified, failed).",
    );
    for (const [key, n] of this.breaches) if (shown(key)) out.push(`service_watch_breaches_total${key} ${n}`);
    family(
      "service_gate_outcomes_total",
      "counter",
      "Gates passed by deploys, by app and outcome (open, shut, timeout).",
    );
    for (const [key, n] of this.gates) if (shown(key)) out.push(`service_gate_outcomes_total${key} ${n}`);
    family("service_frozen_refusals_total", "counter", "Deploys refused by a freeze window, by app.");
    for (const [key, n] of this.frozen) if (shown(key)) out.push(`service_frozen_refusals_total${key} ${n}`);
    family("service_catch_ups_total", "counter", "Catch-up deploys queued after a pause or a freeze, by app.");
    for (const [key, n] of this.catchUps) if (shown(key)) out.push(`service_catch_ups_total${key} ${n}`);
    family(
      "service_refusals_total",
      "counter",
      "Requests acknowledged that ended without running: refused (gate, signature, freeze, pause) or superseded.",
    );
    for (const [key, n] of this.refusals) if (shown(key)) out.push(`service_refusals_total${key} ${n}`);
    family(
      "service_skipped_pushes_total",
      "counter",
      "Pushes that did not deploy, by app and reason (paths, marker, tag, environment).",
    );
    for (const [key, n] of this.skippedPushes) if (shown(key)) out.push(`service_skipped_pushes_total${key} ${n}`);
    family(
      "service_limit_kills_total",
      "counter",
      "Run scripts the kernel killed for a deploy's limits, by app and limit.",
    );
    for (const [key, n] of this.kills) if (shown(key)) out.push(`service_limit_kills_total${key} ${n}`);
    family("service_token_refusals_total", "counter", "Admin requests a token's scope refused (403), by token name.");
    for (const [key, n] of this.tokenRefusals) if (shown(key)) out.push(`service_token_refusals_total${key} ${n}`);
    family(
      "service_notifications_total",
      "counter",
      "Notifications sent or failed (after their tries), by app, format and outcome (sent, failed).",
    );
    for (const [key, n] of this.notifications) if (shown(key)) out.push(`service_notifications_total${key} ${n}`);
    family("service_paused", "gauge", "1 while an app's deploys are paused.");
    for (const { name, paused } of apps) out.push(`service_paused${labels({ app: name })} ${paused ? 1 : 0}`);
    return `${out.join("\n")}\n`;
  }
}

/** What a token scoped to apps is shown: its apps (by name), and its own refusals (by its name). */
export interface Only {
  app(name: string): boolean;
  token: string;
}

/** Whether a row's labels are shown to `only`: an `app` label names one of its apps, a `token` label is its own. */
function shownTo(only: Only, key: string): boolean {
  const label = (name: string) => {
    const match = new RegExp(`[{,]${name}="((?:[^"\\\\]|\\\\.)*)"`).exec(key);
    return match && match[1]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
  };
  const app = label("app");
  const token = label("token");
  return (app === null || only.app(app)) && (token === null || token === only.token);
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** `{a="x",b="y"}` with the exposition format's escapes. */
function labels(values: Record<string, string>): string {
  const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
  return `{${Object.entries(values)
    .map(([key, value]) => `${key}="${escapeLabel(value)}"`)
    .join(",")}}`;
}

/** Why a request ended without running, as the `reason` label says it. */
function refusalKind(result: DeployResult, outcome: Unrun): string {
  if (outcome === "superseded") return "superseded";
  if (result.gate && !result.gate.ok) return "gate";
  if (result.verify && !result.verify.ok) return "signature";
  if (result.error?.startsWith("frozen until")) return "freeze";
  if (result.error?.startsWith("deploys are paused")) return "pause";
  return "other";
}
