import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { cleanActor } from "../system/actor.ts";
import { readJsonRecord, writeJsonRecord } from "../system/files.ts";

/**
 * A push refused by a pause or a freeze (docs/deploy-control.md "Catch-up"): the newest one per app, kept in
 * `.service/refused/<app>.json` (`default.json` in single-app mode) so it outlives a restart. Only the webhook's and
 * the poller's refusals are pushes; a refused `service deploy` or API call was answered to someone who can ask again.
 */
export const REFUSED_DIR = join(".service", "refused");

export interface RefusedPush {
  /** Who pushed (the forge's pusher, `webhook@<address>`, or `poll`). */
  actor: string;
  /** When it was refused (ISO). */
  at: string;
}

const fileOf = (cwd: string, app: string | undefined) => resolve(cwd, REFUSED_DIR, `${app ?? "default"}.json`);

/** Keeps `actor`'s push as the newest refused one of `app`; a failure to write it is only a lost catch-up. */
export function rememberRefusedPush(cwd: string, app: string | undefined, actor: string): void {
  const push: RefusedPush = { actor: cleanActor(actor) ?? "unknown", at: new Date().toISOString() };
  try {
    writeJsonRecord(fileOf(cwd, app), push);
  } catch {}
}

/** The newest refused push of `app`, or undefined. */
export function refusedPush(cwd: string, app: string | undefined): RefusedPush | undefined {
  return readJsonRecord<RefusedPush>(fileOf(cwd, app), (v) => typeof v.actor === "string" && typeof v.at === "string");
}

/** Forgets the refused push of `app` (its catch-up is queued, or not needed). */
export function forgetRefusedPush(cwd: string, app: string | undefined): void {
  rmSync(fileOf(cwd, app), { force: true });
}
