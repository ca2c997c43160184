import { rmSync } from "node:fs";
import { userInfo } from "node:os";
import { join, resolve } from "node:path";
import { ensurePrivateDir, readNoFollow, writeFileAtomic } from "../system/files.ts";

/**
 * Paused deploys: one small file per pause under `.service/paused/`, so a pause outlives restarts and every
 * process of the working directory (the server, `service deploy`, `service status`) reads the same one.
 * `service.json` pauses every app; `app-<name>.json` one app.
 */
export const PAUSE_DIR = join(".service", "paused");

export interface Pause {
  /** Why deploys are paused, as the operator said it (or a default). */
  reason: string;
  /** The app paused; absent when the whole service is. */
  app?: string;
  since: string;
  /** The user who paused. */
  by: string;
}

const DEFAULT_REASON = "deploys are paused";
/** A reason is one line shown to forges and shells: bounded, no control characters. */
const MAX_REASON = 200;

const fileOf = (cwd: string, app: string | undefined) =>
  resolve(cwd, PAUSE_DIR, app === undefined ? "service.json" : `app-${app}.json`);

function read(file: string, app?: string): Pause | undefined {
  try {
    const pause = JSON.parse(readNoFollow(file)) as Pause;
    if (!pause || typeof pause.reason !== "string") return undefined;
    // The file's name says whose pause it is, whatever its text says.
    const { app: _written, ...rest } = pause;
    return app === undefined ? rest : { ...rest, app };
  } catch {
    return undefined;
  }
}

/** The pause in force for `app` (the whole service's first), or undefined when its deploys may run. */
export function pauseOf(cwd: string, app?: string): Pause | undefined {
  return read(fileOf(cwd, undefined)) ?? (app === undefined ? undefined : read(fileOf(cwd, app), app));
}

/** Pauses the deploys of `app`, or of every app; throws when the pause cannot be written. */
export function pause(cwd: string, options: { app?: string; reason?: string } = {}): Pause {
  const reason = cleanReason(options.reason);
  const record: Pause = {
    reason,
    ...(options.app === undefined ? {} : { app: options.app }),
    since: new Date().toISOString(),
    by: userName(),
  };
  ensurePrivateDir(resolve(cwd, PAUSE_DIR));
  writeFileAtomic(fileOf(cwd, options.app), `${JSON.stringify(record, null, 2)}\n`);
  return record;
}

/** Lifts the pause of `app`, or of the whole service; returns the pause lifted, undefined when there was none. */
export function resume(cwd: string, options: { app?: string } = {}): Pause | undefined {
  const file = fileOf(cwd, options.app);
  const was = read(file, options.app);
  rmSync(file, { force: true });
  return was;
}

function cleanReason(reason: string | undefined): string {
  const text = (reason ?? "").replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  if (text.length > MAX_REASON)
    throw new Error(`the reason is ${text.length} characters long; at most ${MAX_REASON} are kept`);
  return text || DEFAULT_REASON;
}

function userName(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid ${process.getuid?.() ?? "?"}`;
  }
}

/**
 * The command that lifts `pause`. An app's pause needs the app's name: `service resume` alone lifts only the
 * pause of every app, and answers "not paused" for an app's.
 */
export function resumeHint(pause: Pick<Pause, "app">): string {
  return pause.app === undefined ? "service resume" : `service resume --app ${pause.app}`;
}

/** The apps among `apps` paused on their own (not by a pause of every app). */
export function pausedApps(cwd: string, apps: (string | undefined)[]): Pause[] {
  return apps.flatMap((app) => {
    const paused = app === undefined ? undefined : read(fileOf(cwd, app), app);
    return paused ? [paused] : [];
  });
}

/** What a starting service says of the pauses in force, one line each. */
export function pauseNotices(cwd: string, apps: (string | undefined)[]): string[] {
  const all = pauseOf(cwd);
  if (all) return [`deploys are paused: ${all.reason} (since ${all.since}, by ${all.by}; ${resumeHint(all)} lifts it)`];
  return pausedApps(cwd, apps).map(
    (paused) =>
      `deploys of app "${paused.app}" are paused: ${paused.reason} (since ${paused.since}, by ${paused.by}; ${resumeHint(paused)} lifts it)`,
  );
}
