/**
 * An app's previews as `.service/previews/<app>.json` keeps them (docs/previews.md "State"): the previews and the
 * last refusals, written atomically after each change; read leniently (a file that does not parse is no previews).
 */
import { join, resolve } from "node:path";
import { readJsonRecord, writeJsonRecord } from "../system/files.ts";
import type { RefusalReason } from "./trust.ts";
import type { Preview } from "./types.ts";

/** A pull request refused at the door, as `service previews` lists it. */
export interface Refusal {
  number: number;
  head: string;
  reason: RefusalReason;
  text: string;
  at: string;
}

export interface AppPreviews {
  previews: Preview[];
  refusals: Refusal[];
}

/** Most refusals kept per app: the newest. */
export const MAX_REFUSALS = 50;

/** The directory of the previews' state, routes and logs. */
export function previewsDir(cwd: string): string {
  return join(resolve(cwd), ".service", "previews");
}

/** The state file of an app's previews (`default` in single-app mode). */
export function stateFile(cwd: string, app: string): string {
  return join(previewsDir(cwd), `${app}.json`);
}

export function readPreviews(cwd: string, app: string): AppPreviews {
  const read = readJsonRecord<AppPreviews>(stateFile(cwd, app), (v) => Array.isArray(v.previews));
  return { previews: read?.previews ?? [], refusals: Array.isArray(read?.refusals) ? read.refusals : [] };
}

export function writePreviews(cwd: string, app: string, state: AppPreviews): void {
  writeJsonRecord(stateFile(cwd, app), { previews: state.previews, refusals: state.refusals.slice(-MAX_REFUSALS) });
}
