import type { ResolvedApp } from "../config/apps.ts";
import { cancelDeploy, cancelledBy, type CancelResult } from "../queue/cancel.ts";
import type { Deployer } from "../deploy/deployer.ts";
import type { DeployResult, DeploySink } from "../types.ts";
import { pause, pauseOf, resume, type Pause } from "../queue/pause.ts";
import { libraryActor } from "../system/actor.ts";
import type { AppStatus } from "./status.ts";
import type { AuditEvent } from "../audit/entry.ts";

type Asked = Omit<AuditEvent, "actor" | "outcome">;

/** The deploy-control actions of the server object (docs/library.md "Library"): those of the CLI, through the same files. */
export interface ServerControl {
  /**
   * Deploys an earlier commit through the server's queue and logs (`service rollback`): `target` is a deploy id,
   * an id prefix, `last-ok` or a commit; none = the newest ok deploy whose commit differs from HEAD. Rejects
   * (nothing queued) when the target names nothing deployable or the app is unknown, and while the app's deploys
   * are paused unless `force` (the record then says `forced: true`).
   */
  rollback(target?: string, options?: { app?: string; sink?: DeploySink; force?: boolean }): Promise<DeployResult>;
  /** Each app's deployed commit, pause, running deploy, waiting count and last outcome (`service status --json`). */
  status(options?: { app?: string }): Promise<AppStatus[]>;
  /**
   * Cancels a deploy by id (or its start), waiting or running, as `service cancel` does. Rejects with a message
   * for the user when the id is unknown, or the deploy already finished.
   */
  cancel(id: string): Promise<CancelResult>;
  /** Pauses the deploys of `app`, or of every app, as `service pause` does. Throws for an unknown app. */
  pause(options?: { app?: string; reason?: string }): Pause;
  /** Lifts a pause, as `service resume` does; returns the pause lifted (undefined when there was none). */
  resume(options?: { app?: string }): Pause | undefined;
}

export interface ControlContext {
  cwd: string;
  deployer: Deployer;
  /** The apps in force now. */
  apps: () => ResolvedApp[];
  secrets: () => string[];
  /** Keeps a started deploy until it ends: a stop waits for it. */
  track: (id: string, result: Promise<DeployResult>) => void;
  /** Writes a line of the audit trail. */
  audit?: (event: AuditEvent) => void;
}

/** The app `name` among the apps in force; throws when there is no such app (a pause of it would never apply). */
export function knownApp(apps: { name?: string }[], name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const names = apps.map((a) => a.name).filter((n): n is string => n !== undefined);
  if (names.length === 0)
    throw new Error(`--app ${name}: the configuration has no apps (single-app mode); leave out --app`);
  if (!names.includes(name)) throw new Error(`no app named "${name}" (apps: ${names.join(", ")})`);
  return name;
}

export function serverControl(ctx: ControlContext): ServerControl {
  const { cwd } = ctx;
  const said = (asked: Asked, error?: unknown) =>
    ctx.audit?.({
      actor: libraryActor(),
      ...asked,
      ...(error === undefined
        ? { outcome: "ok" as const }
        : { outcome: "refused" as const, reason: String((error as Error).message).split("\n")[0] }),
    });
  /** Runs an action of the library, its audit line saying how it ended. */
  function audited<T>(asked: Asked, work: () => T): T {
    let done: T;
    try {
      done = work();
    } catch (error) {
      said(asked, error);
      throw error;
    }
    if (!(done instanceof Promise)) {
      said(asked);
      return done;
    }
    return done.then(
      (value) => {
        said(asked);
        return value;
      },
      (error) => {
        said(asked, error);
        throw error;
      },
    ) as T;
  }
  return {
    // rollback.ts and status.ts (and the poller's state they read) are loaded when first asked for.
    rollback: (target, options = {}) =>
      audited({ action: "rollback", app: options.app, target, force: options.force }, () =>
        rollbackNow(target, options),
      ),
    async status(options = {}) {
      const { readStatus, selectApps } = await import("./status.ts");
      return readStatus(cwd, selectApps(ctx.apps(), options.app));
    },
    cancel: (id) => audited({ action: "cancel", deploy: id }, () => cancelDeploy(cwd, id, cancelledBy(libraryActor()))),
    pause: (options = {}) =>
      audited({ action: "pause", app: options.app }, () =>
        pause(cwd, { ...options, app: knownApp(ctx.apps(), options.app), by: libraryActor() }),
      ),
    resume: (options = {}) =>
      audited({ action: "resume", app: options.app }, () =>
        resume(cwd, { app: knownApp(ctx.apps(), options.app), by: libraryActor() }),
      ),
  };

  /** The rollback asked: its audit line is written when it ends, or is refused (no target, paused, several apps). */
  async function rollbackNow(
    target: string | undefined,
    options: { app?: string; sink?: DeploySink; force?: boolean },
  ): Promise<DeployResult> {
    const [{ rollbackDeploy }, { selectApps }] = await Promise.all([import("./rollback.ts"), import("./status.ts")]);
    const apps = selectApps(ctx.apps(), options.app);
    if (apps.length !== 1)
      throw new Error(`several apps: name the one to roll back (apps: ${apps.map((a) => a.name).join(", ")})`);
    const app = apps[0]!;
    // Pause means pause for every trigger (docs/deploy-control.md "Pause and resume"): refused unless forced.
    const paused = pauseOf(cwd, app.name);
    if (paused && !options.force)
      throw new Error(
        `deploys are paused: ${paused.reason} (since ${paused.since}, by ${paused.by}); force: true rolls back anyway`,
      );
    const deploy = rollbackDeploy(
      ctx.deployer,
      target,
      { config: app, app: app.name, actor: libraryActor(), cwd, secrets: ctx.secrets(), sink: options.sink },
      { force: options.force },
    );
    ctx.track("rollback", deploy);
    return deploy;
  }
}
