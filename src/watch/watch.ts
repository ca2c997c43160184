/**
 * The watch after the health check (docs/watch.md): a check every `intervalMs` for `forMs`, a Prometheus query
 * (prometheus.ts) or a command (command.ts); `failures` failed checks in a row are a breach. It says one `[watch]`
 * line a check, tells its progress to the running record, and ends early on a cancel (what is live stays) or a stop
 * of the service (not finished). What a breach does is the pipeline's (deploy/pipeline.ts). Loaded only for an app
 * that sets `watch`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { bounds, type ResolvedWatch, type WatchValues, watchProgress } from "../config/watch.ts";
import { deployInterrupted } from "../system/process.ts";
import type { WatchProgress, WatchResult } from "../watch-types.ts";
import type { DeployContext } from "../steps/context.ts";
import { commandCheck } from "./command.ts";
import { queryOf, queryPrometheus, type Reading } from "./prometheus.ts";

export interface WatchOptions {
  /** The record's values for the query's placeholders. */
  values: WatchValues;
  /** Where the command runs (repoPath, or with releases the live release). */
  cwd: string;
  /** Aborted when the service stops (a graceful stop does not wait out a watch). */
  stopping?: AbortSignal;
  /** Each check's progress, for the running record. */
  progress?: (progress: WatchProgress) => void;
}

/** A watch's end: its record, and the words of a breach for the line that ends it. */
export interface WatchEnd {
  result: WatchResult;
  /** `0.12 > 0.05 at 2 of 5 min (2 checks)`, on a breach. */
  breach?: string;
}

/** Runs the watch to its end; never throws. */
export async function runWatch(ctx: DeployContext, settings: ResolvedWatch, options: WatchOptions): Promise<WatchEnd> {
  const say = (text: string) => ctx.run.step("watch", text);
  const started = Date.now();
  const what = settings.prometheus
    ? { query: queryOf(settings.prometheus, options.values) }
    : { command: settings.command! };
  const threshold = settings.prometheus ? (settings.prometheus.max ?? settings.prometheus.min ?? null) : 0;
  const ended = new AbortController();
  const interrupted = deployInterrupted();
  const stop = AbortSignal.any([ended.signal, interrupted, ...(options.stopping ? [options.stopping] : [])]);
  let cancelledBy: string | undefined = ctx.cancelled();
  ctx.onCancel((by) => {
    cancelledBy = by;
    ended.abort();
  });
  if (cancelledBy) ended.abort();
  const progressOf = (elapsed: number) => watchProgress(elapsed, settings.forMs);
  say(
    `watching for ${progressOf(settings.forMs).split(" of ")[1]}: ${
      settings.prometheus ? `${what.query} ${bounds(settings.prometheus)}` : `\`${settings.command}\` exits 0`
    }, every ${settings.intervalMs / 1000} s; ${settings.failures} failed check${settings.failures === 1 ? "" : "s"} in a row ${settings.onBreach === "rollback" ? "roll back" : "notify"}`,
  );
  let checks = 0;
  let failures = 0;
  let value: number | null = null;
  let reason: string | undefined;
  const progress = {
    startedAt: new Date(started).toISOString(),
    forMs: settings.forMs,
    commit: options.values.commit ?? null,
    previousCommit: options.values.previousCommit ?? null,
    ...what,
    threshold,
  };
  options.progress?.({ ...progress, checks, failures, lastValue: value });
  const end = (fields: Partial<WatchResult>): WatchResult => ({
    ...what,
    value,
    threshold,
    at: Date.now() - started,
    checks,
    ...(reason !== undefined && fields.breach ? { reason } : {}),
    ...fields,
  });
  for (;;) {
    if (stop.aborted) break;
    const reading: Reading = settings.prometheus
      ? await queryPrometheus(settings.prometheus, { cwd: ctx.cwd, values: options.values, signal: stop })
      : await commandCheck(ctx, settings.command!, options.cwd, settings.intervalMs);
    if (stop.aborted) break;
    checks++;
    const elapsed = Date.now() - started;
    const verdict = judge(reading, settings);
    value = "value" in reading ? reading.value : null;
    reason = "problem" in reading ? reading.problem : undefined;
    failures = verdict.ok ? 0 : failures + 1;
    say(`${progressOf(elapsed)}: ${verdict.text}${verdict.ok ? "" : ` (${failures} of ${settings.failures} failed)`}`);
    options.progress?.({ ...progress, checks, failures, lastValue: value });
    if (failures >= settings.failures)
      return {
        result: end({ breach: true }),
        breach: `${verdict.text} at ${progressOf(elapsed)} (${failures} check${failures === 1 ? "" : "s"})`,
      };
    const remaining = settings.forMs - (Date.now() - started);
    if (remaining <= 0) {
      say(
        `passed: ${checks} check${checks === 1 ? "" : "s"} over ${progressOf(settings.forMs).split(" of ")[1]}; last ${verdict.text}`,
      );
      return { result: end({}) };
    }
    await sleep(Math.min(settings.intervalMs, remaining), undefined, { signal: stop }).catch(() => {});
  }
  const at = progressOf(Date.now() - started);
  if (cancelledBy) {
    say(`ended by a cancel ${cancelledBy} at ${at}: what is live stays`);
    return { result: end({ cancelled: true }) };
  }
  say(`not finished: the service is stopping (at ${at}); what is live stays`);
  return { result: end({ interrupted: true }) };
}

/** Whether a reading passes, and how it is said: `0.003 ≤ 0.05`, `0.12 > 0.05`, `exit 0`, or the problem. */
function judge(reading: Reading, settings: ResolvedWatch): { ok: boolean; text: string } {
  if ("problem" in reading) return { ok: false, text: `check failed: ${reading.problem}` };
  const { value } = reading;
  if (!settings.prometheus)
    return value === 0 ? { ok: true, text: "exit 0" } : { ok: false, text: `exit code ${value}` };
  const { max, min } = settings.prometheus;
  const shown = format(value);
  if (max !== undefined && value > max) return { ok: false, text: `${shown} > ${max}` };
  if (min !== undefined && value < min) return { ok: false, text: `${shown} < ${min}` };
  return { ok: true, text: `${shown} ${max !== undefined ? `≤ ${max}` : `≥ ${min}`}` };
}

/** A value as the lines say it: at most 4 significant digits. */
export function format(value: number): string {
  return Number.isFinite(value) ? String(Number(value.toPrecision(4))) : String(value);
}
