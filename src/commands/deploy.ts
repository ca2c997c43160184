import { defineCommand } from "citty";
import { join } from "node:path";
import { appSecretFile, resolveApps, type ResolvedApp } from "../apps.ts";
import { findConfigFile, loadConfig } from "../config.ts";
import { Transcript } from "../deploy/events.ts";
import { Deployer } from "../deploy/deployer.ts";
import { pauseOf } from "../deploy/pause.ts";
import { queueKey } from "../deploy/queue.ts";
import { readSecretFile, SECRET_FILE } from "../secret.ts";
import { cwdArg, serviceDir } from "./_cwd.ts";
import { STOP_SIGNALS, survivesClosedOutput } from "./_guard.ts";

export const deployCommand = defineCommand({
  meta: {
    name: "deploy",
    description:
      "Run one deploy now (git pull, then the run script), printing its output live. Uses the same config, queue and " +
      "logs as the server started in the current directory, or in the one --cwd names. Exits 0 only when the deploy is ok.",
  },
  args: {
    app: {
      type: "string",
      description: "Multi-app mode: the app to deploy (default: the app whose repoPath is the current directory)",
    },
    force: { type: "boolean", description: "Deploy even while deploys are paused (service pause)" },
    cwd: cwdArg,
  },
  async run({ args }) {
    const here = process.cwd();
    const cwd = serviceDir(args.cwd);
    const config = loadConfig({ cwd });
    // Which config is in force is the first question when a deploy does something unexpected.
    process.stderr.write(`${configLine(findConfigFile(cwd), cwd, args.cwd !== undefined)}\n`);
    const apps = resolveApps(config, cwd);
    const app = pickApp(apps, config.apps.length > 0, here, args.app);
    const paused = pauseOf(cwd, app.name);
    if (paused && !args.force) throw new Error(`deploys are paused: ${paused.reason} (service resume lifts the pause; --force deploys anyway)`);
    const transcript = new Transcript();
    // A closed stdout (`service deploy | head`) must not stop the deploy: it goes on, and its logs complete.
    const stdoutOpen = survivesClosedOutput();
    // Ctrl-C (or a closed terminal) stops the run script's whole process tree; the deploy still ends and
    // writes its logs.
    const deployer = new Deployer();
    let signals = 0;
    const stop = () => {
      signals++;
      deployer.processes.signal(signals > 1 ? "SIGKILL" : "SIGTERM");
    };
    for (const signal of STOP_SIGNALS) process.on(signal, stop);
    const result = await deployer.deploy({
      config: app,
      app: app.name,
      trigger: "cli",
      cwd,
      secrets: knownSecrets(apps, cwd),
      sink: (event) => {
        const bytes = transcript.render(event);
        if (bytes && stdoutOpen()) process.stdout.write(bytes);
      },
    }, { force: args.force });
    for (const signal of STOP_SIGNALS) process.off(signal, stop);
    // Exit now rather than set the exit code: a child the script left in the background may still hold its
    // pipes open, and reading them would keep this process alive.
    if (stdoutOpen()) await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
    process.exit(result.ok ? 0 : 1);
  },
});

/** The config file a deploy uses; without one, where it looked and how to use a service's config from elsewhere. */
function configLine(file: string | undefined, cwd: string, dirGiven: boolean): string {
  if (file) return `config: ${file}`;
  const elsewhere = dirGiven ? "" : "; for a service that runs in another directory: service deploy --cwd DIR";
  return `config: none in ${cwd} (defaults and environment only${elsewhere})`;
}

function pickApp(apps: ResolvedApp[], multiApp: boolean, cwd: string, name: string | undefined): ResolvedApp {
  if (!multiApp) {
    // Deploying the one app anyway would deploy something the user did not name.
    if (name) throw new Error(`--app ${name}: the configuration has no apps (single-app mode); run service deploy without --app`);
    return apps[0]!;
  }
  const names = apps.map((a) => a.name).join(", ");
  if (name) {
    const app = apps.find((a) => a.name === name);
    if (!app) throw new Error(`no app named "${name}" (apps: ${names})`);
    return app;
  }
  const here = queueKey(cwd);
  const app = apps.find((a) => queueKey(a.repoPath) === here);
  if (!app) throw new Error(`no app deploys ${cwd}: name one with --app (apps: ${names})`);
  return app;
}

/** The webhook secrets this directory knows (never generated here), to keep them out of the output. */
function knownSecrets(apps: ResolvedApp[], cwd: string): string[] {
  const read = (file: string) => {
    try {
      return readSecretFile(file);
    } catch {
      return undefined;
    }
  };
  return apps
    .map((app) => app.secret ?? read(app.name ? appSecretFile(cwd, app.name) : join(cwd, SECRET_FILE)))
    .filter((secret): secret is string => !!secret);
}
