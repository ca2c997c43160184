/**
 * The last push an app skipped because of its `paths` or a skip marker, for `service status` ("last skipped push")
 * and the admin API: kept in `.service/skipped/<app>.json` (`default.json` in single-app mode), written atomically
 * in a private directory, read without following a link.
 */
import { join, resolve } from "node:path";
import { readJsonRecord, writeJsonRecord } from "../system/files.ts";
import type { TriggerSkip } from "./types.ts";

export const SKIPPED_DIR = join(".service", "skipped");

export interface LastSkipped {
  /** When it was skipped (ISO). */
  at: string;
  reason: TriggerSkip["reason"];
  text: string;
}

const fileOf = (cwd: string, app: string | undefined) => resolve(cwd, SKIPPED_DIR, `${app ?? "default"}.json`);

/** Keeps `skip` as the last skipped push of `app`; a failure to write it only loses a line of `service status`. */
export function rememberSkippedPush(cwd: string, app: string | undefined, skip: TriggerSkip): void {
  const last: LastSkipped = { at: new Date().toISOString(), reason: skip.reason, text: skip.text };
  try {
    writeJsonRecord(fileOf(cwd, app), last);
  } catch {}
}

/** The last skipped push of `app`, or null. */
export function lastSkippedPush(cwd: string, app: string | undefined): LastSkipped | null {
  const last = readJsonRecord<LastSkipped>(
    fileOf(cwd, app),
    (v) => typeof v.at === "string" && typeof v.reason === "string" && typeof v.text === "string",
  );
  return last ? { at: last.at, reason: last.reason, text: last.text } : null;
}
