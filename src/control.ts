import type { ResolvedApp } from "./apps.ts";
import type { Deployer } from "./deploy/deployer.ts";
import type { DeployResult, DeploySink } from "./deploy/events.ts";
import { rollbackDeploy } from "./deploy/rollback.ts";
import { readStatus, selectApps, type AppStatus } from "./status.ts";

/** The deploy-control actions of the server object (README "Library"). */
export interface ServerControl {
  /**
   * Deploys an earlier commit through the server's queue and logs (`service rollback`): `target` is a deploy id,
   * an id prefix, `last-ok` or a commit; none = the newest ok deploy whose commit differs from HEAD. Rejects
   * (nothing queued) when the target names nothing deployable or the app is unknown.
   */
  rollback(target?: string, options?: { app?: string; sink?: DeploySink }): Promise<DeployResult>;
  /** Each app's deployed commit, pause, running deploy, waiting count and last outcome (`service status --json`). */
  status(options?: { app?: string }): Promise<AppStatus[]>;
}

export interface ControlContext {
  cwd: string;
  deployer: Deployer;
  /** The apps in force now. */
  apps: () => ResolvedApp[];
  secrets: () => string[];
  /** The deploys a stop waits for. */
  inFlight: Set<Promise<unknown>>;
}

export function serverControl(ctx: ControlContext): ServerControl {
  return {
    async rollback(target, options = {}) {
      const apps = selectApps(ctx.apps(), options.app);
      if (apps.length !== 1) throw new Error(`several apps: name the one to roll back (apps: ${apps.map((a) => a.name).join(", ")})`);
      const app = apps[0]!;
      const deploy = rollbackDeploy(ctx.deployer, target, { config: app, app: app.name, cwd: ctx.cwd, secrets: ctx.secrets(), sink: options.sink });
      ctx.inFlight.add(deploy);
      deploy.catch(() => {}).finally(() => ctx.inFlight.delete(deploy));
      return deploy;
    },
    async status(options = {}) {
      return readStatus(ctx.cwd, selectApps(ctx.apps(), options.app));
    },
  };
}
