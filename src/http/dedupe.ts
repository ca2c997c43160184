/**
 * Duplicate deliveries (docs/forges.md "Duplicate deliveries"): with `dedupeDeliveries`, a delivery id an app
 * already deployed in the last 24 hours is answered `[skipped] duplicate delivery …` and deploys nothing. The ids
 * are kept per app in `.service/deliveries/<app>.json`, so a retry that comes after a restart is still known;
 * at most MAX_DELIVERIES per app, the oldest forgotten first. Loaded only when an app turns it on.
 */
import { join, resolve } from "node:path";
import { findDeploy, findQueued, resultLabel } from "../history/read.ts";
import { ensurePrivateDir, readNoFollow, writeFileAtomic } from "../system/files.ts";
import type { Logger } from "../system/logger.ts";
import type { ForgeDelivery } from "../types.ts";
import { jsonResponse } from "./response.ts";

export const DELIVERIES_DIR = join(".service", "deliveries");

/** How long a delivery id is remembered. */
export const DEDUPE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Delivery ids kept per app: a busy app's file stays small (~100 KB). */
export const MAX_DELIVERIES = 1000;

/** One delivery seen: the deploy that served it, and when (ms). */
interface Seen {
  deploy: string;
  at: number;
}

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
      try {
        const stored = JSON.parse(readNoFollow(this.file(app))) as Record<string, unknown>;
        const entries = Object.entries(stored)
          .filter((entry): entry is [string, Seen] => {
            const value = entry[1] as Partial<Seen> | null;
            return typeof value?.deploy === "string" && typeof value.at === "number";
          })
          .sort((a, b) => a[1].at - b[1].at);
        for (const [delivery, value] of entries) seen.set(delivery, value);
      } catch {
        // None yet, or unreadable (not a regular file, a hand edit): start empty.
      }
      this.apps.set(app, seen);
    }
    for (const [delivery, value] of seen) {
      if (now - value.at < DEDUPE_WINDOW_MS) break;
      seen.delete(delivery);
    }
    return seen;
  }

  /** The deploy that served `delivery` for `app` in the last 24 hours, if one did. */
  seen(app: string, delivery: string, now = Date.now()): Seen | undefined {
    return this.load(app, now).get(delivery);
  }

  /** Remembers that `deploy` serves `delivery`; undone with `forget` when the deploy could not be queued. */
  remember(app: string, delivery: string, deploy: string, now = Date.now()): void {
    const seen = this.load(app, now);
    seen.delete(delivery);
    seen.set(delivery, { deploy, at: now });
    while (seen.size > MAX_DELIVERIES) seen.delete(seen.keys().next().value!);
    this.save(app, seen);
  }

  forget(app: string, delivery: string): void {
    const seen = this.apps.get(app);
    if (seen?.delete(delivery)) this.save(app, seen);
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

/** A deploy's state as the answer to a duplicate names it: queued, running, ok, failed, rolled back, cancelled … */
function stateOf(cwd: string, id: string): string {
  const entry = findDeploy(cwd, id);
  if (typeof entry !== "string") return resultLabel(entry).toLowerCase();
  return findQueued(cwd, id) ? "queued" : "no longer in the history";
}

/** The 200 answer to a duplicate delivery: `[skipped] duplicate delivery <id>: deploy <deploy id> (<state>)`. */
export function duplicateResponse(cwd: string, forge: ForgeDelivery, deploy: string, json: boolean): Response {
  const state = stateOf(cwd, deploy);
  const message = `duplicate delivery ${forge.delivery}: deploy ${deploy} (${state})`;
  if (json) return jsonResponse(200, { skipped: true, ok: true, ...forge, duplicateOf: deploy, state, message });
  return new Response(`[skipped] ${message}\n`, { headers: { "content-type": "text/plain; charset=utf-8" } });
}
