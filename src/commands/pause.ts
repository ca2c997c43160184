import { defineCommand } from "citty";
import { resolveApps } from "../config/apps.ts";
import { loadConfig } from "../config/load.ts";
import { knownApp } from "../control/actions.ts";
import { pause, pausedApps, pauseOf, resume, resumeHint } from "../queue/pause.ts";
import { consola } from "../system/consola.ts";
import { controlDir, cwdArg } from "./_cwd.ts";
import { audited } from "./_audit.ts";

const appArg = {
  type: "string",
  valueHint: "name",
  description: "Multi-app mode: only this app (default: every app)",
} as const;

/** The app `--app` names, checked against the configuration: a pause of an app that does not exist would never apply. */
function checkedApp(cwd: string, name: string | undefined): string | undefined {
  return name === undefined ? undefined : knownApp(appsOf(cwd), name);
}

const appsOf = (cwd: string) => resolveApps(loadConfig({ cwd }), cwd);

/** Why nothing was lifted: a pause of the whole service still holds the app, or some apps are paused on their own. */
function notPaused(cwd: string, app: string | undefined): string {
  const still = pauseOf(cwd, app);
  if (still)
    return `${what(app)} are paused by a pause of the whole service (${still.reason}): service resume without --app lifts it`;
  if (app !== undefined) return `${what(app)} are not paused`;
  let names: (string | undefined)[] = [];
  try {
    names = appsOf(cwd).map((a) => a.name);
  } catch {
    // A configuration that does not load names no apps; the answer stays "not paused".
  }
  const apps = pausedApps(cwd, names);
  if (apps.length === 0) return "deploys are not paused";
  const each = apps.map((p) => `app "${p.app}" is paused (${p.reason}): ${resumeHint(p)} lifts it`);
  return `deploys of every app are not paused; ${each.join("; ")}`;
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
  async run({ args }) {
    const cwd = controlDir(args.cwd);
    const done = await audited(cwd, { action: "pause", app: args.app }, () =>
      pause(cwd, { app: checkedApp(cwd, args.app), reason: args.reason }),
    );
    const app = args.app;
    consola.info(`paused ${what(app)}: ${done.reason} (${resumeHint(done)} to lift it)`);
  },
});

export const resumeCommand = defineCommand({
  meta: { name: "resume", description: "Lift a pause made by service pause: deploys run again, waiting ones go on." },
  args: { app: appArg, cwd: cwdArg },
  async run({ args }) {
    const cwd = controlDir(args.cwd);
    const app = args.app;
    const { still } = await audited(cwd, { action: "resume", app }, () => {
      const lifted = resume(cwd, { app: checkedApp(cwd, app) });
      if (!lifted) throw new Error(notPaused(cwd, app));
      return { still: pauseOf(cwd, app) };
    });
    consola.info(
      `resumed ${what(app)}${still ? `; still paused by a pause of the whole service: ${still.reason}` : ""}`,
    );
  },
});
