import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { cleanActor, cliActor } from "../system/actor.ts";
import { ensurePrivateDir, readNoFollow, writeFileAtomic } from "../system/files.ts";

/**
 * Paused deploys: one small file per pause under `.service/paused/`, so a pause outlives restarts and every
 * process of the working directory (the server, `service deploy`, `service status`) reads the same one.
 * `service.json` pauses every app; `app-<name>.json` one app. A resume leaves `resumed-<that name>`: the pause
 * it lifted, who lifted it and when.
 */
export const PAUSE_DIR = join(".service", "paused");

export interface Pause {
  /** Why deploys are paused, as the operator said it (or a default). */
  reason: string;
  /** The app paused; absent when the whole service is. */
  app?: string;
  since: string;
  /** Who paused: `cli:<user>`, `admin@<address>`, `library:<user>` (a plain user name in older files). */
  by: string;
}

/** The last lift of a pause: who resumed, when, and the pause it lifted. */
export interface Resume {
  by: string;
  at: string;
  pause: Pause;
}

const DEFAULT_REASON = "deploys are paused";
/** A reason is one line shown to forges and shells: bounded, no control characters. */
const MAX_REASON = 200;

const nameOf = (app: string | undefined) => (app === undefined ? "service.json" : `app-${app}.json`);
const fileOf = (cwd: string, app: string | undefined) => resolve(cwd, PAUSE_DIR, nameOf(app));
const resumedFileOf = (cwd: string, app: string | undefined) => resolve(cwd, PAUSE_DIR, `resumed-${nameOf(app)}`);

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

/**
 * Pauses the deploys of `app`, or of every app, on behalf of `by` (the shell's user by default); throws when the
 * pause cannot be written.
 */
export function pause(cwd: string, options: { app?: string; reason?: string; by?: string } = {}): Pause {
  const reason = cleanReason(options.reason);
  const record: Pause = {
    reason,
    ...(options.app === undefined ? {} : { app: options.app }),
    since: new Date().toISOString(),
    by: cleanActor(options.by) ?? cliActor(),
  };
  ensurePrivateDir(resolve(cwd, PAUSE_DIR));
  writeFileAtomic(fileOf(cwd, options.app), `${JSON.stringify(record, null, 2)}\n`);
  return record;
}

/**
 * Lifts the pause of `app`, or of the whole service, on behalf of `by`; returns the pause lifted, undefined when
 * there was none. Who lifted it is kept (`lastResume`); a failure to keep that never keeps the pause.
 */
export function resume(cwd: string, options: { app?: string; by?: string } = {}): Pause | undefined {
  const file = fileOf(cwd, options.app);
  const was = read(file, options.app);
  rmSync(file, { force: true });
  if (was) {
    const lifted: Resume = { by: cleanActor(options.by) ?? cliActor(), at: new Date().toISOString(), pause: was };
    try {
      writeFileAtomic(resumedFileOf(cwd, options.app), `${JSON.stringify(lifted, null, 2)}\n`);
    } catch {}
  }
  return was;
}

/** The last resume of `app`'s own pause (or the whole service's, without `app`); undefined when none is known. */
export function lastResume(cwd: string, app?: string): Resume | undefined {
  try {
    const lifted = JSON.parse(readNoFollow(resumedFileOf(cwd, app))) as Resume;
    return lifted && typeof lifted.by === "string" && typeof lifted.at === "string" && lifted.pause
      ? lifted
      : undefined;
  } catch {
    return undefined;
  }
}

function cleanReason(reason: string | undefined): string {
  const text = (reason ?? "").replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  if (text.length > MAX_REASON)
    throw new Error(`the reason is ${text.length} characters long; at most ${MAX_REASON} are kept`);
  return text || DEFAULT_REASON;
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
