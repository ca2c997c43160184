import { defineCommand } from "citty";
import { consola } from "consola";
import { resolveApps } from "../config/apps.ts";
import { loadConfig } from "../config/load.ts";
import { knownApp } from "../control/actions.ts";
import { pause, pauseOf, resume } from "../queue/pause.ts";
import { cwdArg, serviceDir } from "./_cwd.ts";

const appArg = {
  type: "string",
  valueHint: "name",
  description: "Multi-app mode: only this app (default: every app)",
} as const;

/** The app `--app` names, checked against the configuration: a pause of an app that does not exist would never apply. */
function checkedApp(cwd: string, name: string | undefined): string | undefined {
  return name === undefined ? undefined : knownApp(resolveApps(loadConfig({ cwd }), cwd), name);
}

const what = (app: string | undefined) => (app === undefined ? "deploys" : `deploys of app "${app}"`);

export const pauseCommand = defineCommand({
  meta: {
    name: "pause",
    description:
      "Pause deploys: webhooks answer 200 [skipped] paused and start nothing, service deploy refuses (unless --force) " +
      "until service resume. A running deploy finishes; waiting ones wait. Survives restarts.",
  },
  args: {
    app: appArg,
    reason: { type: "string", valueHint: "text", description: "Why (shown to forges, shells and service status)" },
    cwd: cwdArg,
  },
  run({ args }) {
    const cwd = serviceDir(args.cwd);
    const app = checkedApp(cwd, args.app);
    const done = pause(cwd, { app, reason: args.reason });
    consola.info(
      `paused ${what(app)}: ${done.reason} (service resume${app === undefined ? "" : ` --app ${app}`} to lift it)`,
    );
  },
});

export const resumeCommand = defineCommand({
  meta: { name: "resume", description: "Lift a pause made by service pause: deploys run again, waiting ones go on." },
  args: { app: appArg, cwd: cwdArg },
  run({ args }) {
    const cwd = serviceDir(args.cwd);
    const app = checkedApp(cwd, args.app);
    const was = resume(cwd, { app });
    const still = pauseOf(cwd, app);
    if (!was)
      throw new Error(
        `${what(app)} ${still ? `are paused by a pause of the whole service (${still.reason}): service resume without --app lifts it` : "are not paused"}`,
      );
    consola.info(
      `resumed ${what(app)}${still ? `; still paused by a pause of the whole service: ${still.reason}` : ""}`,
    );
  },
});
