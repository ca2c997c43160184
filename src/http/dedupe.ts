/**
 * Duplicate deliveries (docs/forges.md "Duplicate deliveries"): with `dedupeDeliveries`, a delivery id an app
 * already deployed in the last 24 hours is answered `[skipped] duplicate delivery …` and deploys nothing, unless
 * that deploy was cancelled, interrupted or refused before its script ran (then a redelivery retries it). The
 * ids are kept per app in `.service/deliveries/<app>.json`, hashed, so a retry that comes after a restart is still
 * known; at most MAX_DELIVERIES per app, the oldest forgotten first. Loaded only when an app turns it on.
 */
import { createHash } from "node:crypto";
import { closeSync, fstatSync, readSync } from "node:fs";
import { join, resolve } from "node:path";
import { findDeploy, findQueued, type HistoryEntry, readDeployRecord, resultLabel } from "../history/read.ts";
import { ensurePrivateDir, openRegular, writeFileAtomic } from "../system/files.ts";
import type { Logger } from "../system/logger.ts";
import type { ForgeDelivery } from "../types.ts";
import { jsonResponse } from "./json.ts";

export const DELIVERIES_DIR = join(".service", "deliveries");

/** How long a delivery id is remembered. */
export const DEDUPE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Delivery ids kept per app: a busy app's file stays small (~120 KB). */
export const MAX_DELIVERIES = 1000;

/**
 * The most of an app's file read: ten times what MAX_DELIVERIES take. A larger file (an edit, another program) is
 * read from its end, where the newest entries are.
 */
export const MAX_STORE_BYTES = 1024 * 1024;

/** One delivery seen: the deploy that served it, and when (ms). */
interface Seen {
  deploy: string;
  at: number;
}

/** A duplicate: the deploy that served the delivery first, and its state as the answer names it. */
export interface Duplicate {
  deploy: string;
  state: string;
}

/** The key a delivery id is kept under: its SHA-256, so ids of any length are told apart whole, in a fixed size. */
export function deliveryKey(delivery: string): string {
  return createHash("sha256").update(delivery).digest("hex");
}

const HASHED = /^[0-9a-f]{64}$/;

/** One entry as the service writes it, found in a part of a file (its start may be cut). */
const ENTRY = /"((?:[^"\\]|\\.)*)"\s*:\s*\{\s*"deploy"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"at"\s*:\s*(\d+)\s*\}/g;

/** The delivery ids of each app, read from their files at first use and written back at each change. */
export class DeliveryLog {
  private readonly apps = new Map<string, Map<string, Seen>>();
  private unwritable = false;

  constructor(
    private readonly cwd: string,
    private readonly logger: Logger,
  ) {}

  private file(app: string): string {
    return resolve(this.cwd, DELIVERIES_DIR, `${app}.json`);
  }

  /** The app's ids still in the window, oldest first. */
  private load(app: string, now: number): Map<string, Seen> {
    let seen = this.apps.get(app);
    if (!seen) {
      seen = new Map();
      const { entries, size } = this.read(app);
      entries.sort((a, b) => a[1].at - b[1].at);
      // Ids kept by an older version are the ids themselves.
      for (const [key, value] of entries.slice(-MAX_DELIVERIES))
        seen.set(HASHED.test(key) ? key : deliveryKey(key), value);
      this.apps.set(app, seen);
      if (size > MAX_STORE_BYTES) {
        this.logger.warn(
          `the delivery ids of app "${app}" (${this.file(app)}, ${Math.round(size / 1024 / 1024)} MB) are more than the ${MAX_STORE_BYTES / 1024 / 1024} MiB read: kept the newest ${seen.size}, forgot the older ones`,
        );
        this.save(app, seen);
      }
    }
    for (const [key, value] of seen) {
      if (now - value.at < DEDUPE_WINDOW_MS) break;
      seen.delete(key);
    }
    return seen;
  }

  /**
   * The entries of the app's file, and its size. A file over MAX_STORE_BYTES is read from its end (the newest
   * entries), never whole. None yet, or unreadable (not a regular file, a hand edit): none.
   */
  private read(app: string): { entries: [string, Seen][]; size: number } {
    let text: string;
    let size: number;
    try {
      const fd = openRegular(this.file(app));
      try {
        size = fstatSync(fd).size;
        const buffer = Buffer.alloc(Math.min(size, MAX_STORE_BYTES));
        text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, size - buffer.length)).toString("utf8");
      } finally {
        closeSync(fd);
      }
    } catch {
      return { entries: [], size: 0 };
    }
    const valid = (entry: [string, unknown]): entry is [string, Seen] => {
      const value = entry[1] as Partial<Seen> | null;
      return typeof value?.deploy === "string" && typeof value.at === "number";
    };
    if (size <= MAX_STORE_BYTES) {
      try {
        return { entries: Object.entries(JSON.parse(text) as Record<string, unknown>).filter(valid), size };
      } catch {
        return { entries: [], size };
      }
    }
    // Its first entry may be cut: only whole ones match.
    const entries: [string, Seen][] = [];
    for (const [, key, deploy, at] of text.matchAll(ENTRY)) {
      try {
        entries.push([JSON.parse(`"${key}"`), { deploy: JSON.parse(`"${deploy}"`), at: Number(at) }]);
      } catch {}
    }
    return { entries, size };
  }

  /** The deploy that served `delivery` for `app` in the last 24 hours, if one did. */
  seen(app: string, delivery: string, now = Date.now()): Seen | undefined {
    return this.load(app, now).get(deliveryKey(delivery));
  }

  /**
   * The earlier deploy `delivery` is a duplicate of: it waits, runs, or ended (ok, or failed by its script).
   * Undefined for a new delivery, and for one whose deploy was cancelled, interrupted or refused before it ran.
   */
  duplicate(app: string, delivery: string, now = Date.now()): Duplicate | undefined {
    const deploy = this.seen(app, delivery, now)?.deploy;
    if (!deploy) return undefined;
    const { state, again } = standing(this.cwd, deploy);
    if (!again) return { deploy, state };
    this.logger.info(`app "${app}": a delivery its deploy ${deploy} (${state}) served came again: deploying it`);
    return undefined;
  }

  /** Remembers that `deploy` serves `delivery`; undone with `forget` when the deploy could not be queued. */
  remember(app: string, delivery: string, deploy: string, now = Date.now()): void {
    const seen = this.load(app, now);
    const key = deliveryKey(delivery);
    seen.delete(key);
    seen.set(key, { deploy, at: now });
    while (seen.size > MAX_DELIVERIES) seen.delete(seen.keys().next().value!);
    this.save(app, seen);
  }

  forget(app: string, delivery: string): void {
    const seen = this.apps.get(app);
    if (seen?.delete(deliveryKey(delivery))) this.save(app, seen);
  }

  private save(app: string, seen: Map<string, Seen>): void {
    try {
      ensurePrivateDir(resolve(this.cwd, DELIVERIES_DIR));
      writeFileAtomic(this.file(app), `${JSON.stringify(Object.fromEntries(seen))}\n`);
      this.unwritable = false;
    } catch (error) {
      // This process still knows them; only a restart would forget. Said once, not at every delivery.
      if (!this.unwritable)
        this.logger.warn(`cannot keep the delivery ids of app "${app}": ${(error as Error).message}`);
      this.unwritable = true;
    }
  }
}

/**
 * A deploy's state as the answer to a duplicate names it (queued, running, ok, failed, rolled back, cancelled …),
 * and whether a redelivery deploys `again`: when that deploy was cancelled or interrupted, never started, or was
 * refused before its script ran. A deploy no longer in the history ran long ago: a duplicate.
 */
function standing(cwd: string, id: string): { state: string; again: boolean } {
  const entry = findDeploy(cwd, id);
  if (typeof entry === "string") {
    const queued = findQueued(cwd, id);
    if (!queued) return { state: "no longer in the history", again: false };
    return queued.waiting ? { state: "queued", again: false } : { state: "never started", again: true };
  }
  const state = resultLabel(entry).toLowerCase();
  const again =
    entry.status === "cancelled" ||
    entry.status === "interrupted" ||
    (entry.status === "done" && !entry.ok && notRun(entry));
  return { state: again && entry.status === "done" ? "refused before it ran" : state, again };
}

/**
 * A failed deploy whose run script never ran: refused before it (the checkout's branch, its variables, the pushed
 * commit, a signature, the queue) or unable to start it. A script that timed out or was killed ran.
 */
function notRun(entry: HistoryEntry): boolean {
  const run = readDeployRecord(entry.jsonPath)?.result?.run as { exitCode?: unknown; timedOut?: unknown } | undefined;
  return run?.exitCode === null && run.timedOut !== true;
}

/** The 200 answer to a duplicate delivery: `[skipped] duplicate delivery <id>: deploy <deploy id> (<state>)`. */
export function duplicateResponse(forge: ForgeDelivery, duplicate: Duplicate, json: boolean): Response {
  const { deploy, state } = duplicate;
  const message = `duplicate delivery ${forge.delivery}: deploy ${deploy} (${state})`;
  if (json) return jsonResponse(200, { skipped: true, ok: true, ...forge, duplicateOf: deploy, state, message });
  return new Response(`[skipped] ${message}\n`, { headers: { "content-type": "text/plain; charset=utf-8" } });
}
