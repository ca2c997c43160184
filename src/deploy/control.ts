import { cancelDeploy, cancelledBy, type CancelOutcome } from "./cancel.ts";
import { pause, resume, type Pause } from "./pause.ts";

/** The deploy controls of the library's server object: the same actions, and the same files, as the CLI's. */
export interface DeployControls {
  /**
   * Cancels a deploy by id (or its start), waiting or running, as `service cancel` does. Rejects with a message
   * for the user when the id is unknown, or the deploy already finished.
   */
  cancel(id: string): Promise<CancelOutcome>;
  /** Pauses the deploys of `app`, or of every app, as `service pause` does. Throws for an unknown app. */
  pause(options?: { app?: string; reason?: string }): Pause;
  /** Lifts a pause, as `service resume` does; returns the pause lifted (undefined when there was none). */
  resume(options?: { app?: string }): Pause | undefined;
}

/** The app `name` among the apps in force; throws when there is no such app (a pause of it would never apply). */
export function knownApp(apps: { name?: string }[], name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const names = apps.map((a) => a.name).filter((n): n is string => n !== undefined);
  if (names.length === 0) throw new Error(`--app ${name}: the configuration has no apps (single-app mode); leave out --app`);
  if (!names.includes(name)) throw new Error(`no app named "${name}" (apps: ${names.join(", ")})`);
  return name;
}

export function deployControls(cwd: string, apps: () => { name?: string }[]): DeployControls {
  return {
    cancel: (id) => cancelDeploy(cwd, id, cancelledBy("library")),
    pause: (options = {}) => pause(cwd, { ...options, app: knownApp(apps(), options.app) }),
    resume: (options = {}) => resume(cwd, { app: knownApp(apps(), options.app) }),
  };
}
