import { defineCommand } from "citty";
import { resolveApps, type ResolvedApp } from "../config/apps.ts";
import { deploySecrets } from "../config/deploy-secrets.ts";
import { tokenSecrets } from "../tokens/load.ts";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import { findConfigFile, loadConfig } from "../config/load.ts";
import { Transcript } from "../history/transcript.ts";
import type { DeployResult, DeploySink } from "../types.ts";
import { Deployer } from "../deploy/deployer.ts";
import { retentionDone } from "../deploy/after-done.ts";
import { pauseOf, resumeHint } from "../queue/pause.ts";
import { freezeOf, frozenText } from "../deploy/frozen.ts";
import { queueKey } from "../queue/tickets.ts";
import { OutboundCalls } from "../notify/outbound.ts";
import { outboundSinks } from "../notify/sink.ts";
import { cwdArg, serviceDir } from "./_cwd.ts";
import { deployRefTarget, tagsTarget } from "../control/deploy-ref.ts";
import { cliActor } from "../system/actor.ts";
import { consola } from "../system/consola.ts";
import { STOP_SIGNALS, survivesClosedOutput } from "./_guard.ts";
import { audited } from "./_audit.ts";

export const deployCommand = defineCommand({
  meta: {
    name: "deploy",
    description:
      "Run one deploy now (git pull, then the run script), printing its output live. Uses the same config, queue and " +
      "logs as the server started in the current directory, or in the one --cwd names. Exits 0 when the deploy is ok, 1 when " +
      "it failed, 3 when it failed and was rolled back.",
  },
  args: {
    app: {
      type: "string",
      description: "Multi-app mode: the app to deploy (default: the app whose repoPath is the current directory)",
    },
    ref: {
      type: "string",
      valueHint: "ref",
      description:
        "Deploy exactly this instead of pulling: a tag, a branch (as the remote has it now), a commit, or a deploy id " +
        "(a retry of the commit that deploy tried); the checkout stays on its branch",
    },
    force: { type: "boolean", description: "Deploy even while deploys are paused (service pause) or frozen (freeze)" },
    "skip-gate": {
      type: "boolean",
      description: "Deploy without waiting for the app's gate (the forge's checks); the record says so",
    },
    carry: {
      type: "boolean",
      default: true,
      description:
        "With releases.carry: --no-carry builds this release from nothing (a cache gone bad); the record says so",
    },
    cwd: cwdArg,
  },
  async run({ args }) {
    const { cwd, config, apps, app } = chooseApp(args);
    const asked = {
      action: "deploy asked" as const,
      app: app.name ?? "default",
      ...(args.ref ? { target: args.ref } : {}),
      ...(args.force ? { force: true } : {}),
      ...(args["skip-gate"] ? { skipGate: true } : {}),
    };
    const target = await audited(cwd, asked, async () => {
      refuseWhilePaused(cwd, app, args.force);
      refuseWhileFrozen(app, args.force);
      // Resolved before anything is queued: a ref that names nothing is one error line.
      // With `tags` and no ref: the highest matching tag on the remote.
      return args.ref === undefined
        ? await tagsTarget(cwd, app, process.env)
        : await deployRefTarget(cwd, app, args.ref, process.env);
    });
    await printLive((deployer, sink) =>
      deployer.deploy(
        {
          config: app,
          app: app.name,
          trigger: "cli",
          actor: cliActor(),
          ...(target ? { target } : {}),
          ...(args["skip-gate"] ? { skipGate: true } : {}),
          ...(args.carry === false ? { noCarry: true } : {}),
          cwd,
          secrets: commandSecrets(config, apps, cwd),
          sink,
        },
        { force: args.force },
      ),
    );
  },
});

/**
 * The exit code of a deploy that failed and was rolled back (docs/cli.md "Exit codes"): its stream says
 * `ok=true` (the previous commit runs again), but what was asked for is not live, and a CI step must notice.
 */
export const ROLLED_BACK_EXIT_CODE = 3;

/** 0 when what was asked for is live, 1 when the deploy failed, 3 when it failed and was rolled back. */
export function exitCodeOf(result: Pick<DeployResult, "ok" | "rolledBack">): number {
  if (!result.ok) return 1;
  return result.rolledBack ? ROLLED_BACK_EXIT_CODE : 0;
}

/** Refuses a deploy while the app's deploys are paused, unless `--force` (the record then says `forced`). */
export function refuseWhilePaused(cwd: string, app: ResolvedApp, force: boolean | undefined): void {
  const paused = pauseOf(cwd, app.name);
  if (paused && !force)
    throw new Error(
      `deploys are paused: ${paused.reason} (since ${paused.since}, by ${paused.by}; ${resumeHint(paused)} lifts the pause; --force deploys anyway)`,
    );
}

/** Refuses a deploy while a freeze window holds the app, unless `--force` (the record then says `forced`). */
function refuseWhileFrozen(app: ResolvedApp, force: boolean | undefined): void {
  const freeze = freezeOf({ config: app });
  if (freeze && !force) throw new Error(`deploys are ${frozenText(freeze)} (--force deploys anyway)`);
}

/** Long enough for three tries of a 10-second call and their backoff. */
const CLI_OUTBOUND_GRACE_MS = 40_000;

/** The service directory `--cwd` names, its apps, and the one `--app` (or the current directory) picks. */
export function chooseApp(args: { cwd?: string; app?: string }): {
  cwd: string;
  config: ResolvedConfig;
  apps: ResolvedApp[];
  app: ResolvedApp;
} {
  const here = process.cwd();
  const cwd = serviceDir(args.cwd);
  const config = loadConfig({ cwd });
  // Which config is in force is the first question when a deploy does something unexpected.
  process.stderr.write(`${configLine(findConfigFile(cwd), cwd, args.cwd !== undefined)}\n`);
  const apps = resolveApps(config, cwd);
  return { cwd, config, apps, app: pickApp(apps, config.apps.length > 0, here, args.app) };
}

/**
 * Runs one deploy that `start` asks for, printing it live, and exits with `exitCodeOf` its result. A closed stdout
 * (`service deploy | head`) does not stop it: it goes on, and its logs complete. Ctrl-C (or a closed terminal)
 * stops the run script's whole process tree; the deploy still ends and writes its logs.
 */
/**
 * The secrets a deploy run from a shell keeps out of its output: the server's own list (deploySecrets) and the
 * values of the scoped `tokens`, as the server's deploys do.
 */
export function commandSecrets(config: ResolvedConfig, apps: ResolvedApp[], cwd: string): string[] {
  return [...deploySecrets(config, apps, cwd, process.env), ...tokenSecrets(config.tokens, apps, cwd)];
}

export async function printLive(start: (deployer: Deployer, sink: DeploySink) => Promise<DeployResult>): Promise<void> {
  const transcript = new Transcript();
  const stdoutOpen = survivesClosedOutput();
  const outbound = new OutboundCalls();
  // stdout is the deploy's stream, which ends with its `[done]` line: what is said after it (the releases pruned)
  // goes to stderr, as the deploy's own warnings do.
  const logger = consola.create({ stdout: process.stderr }).withTag("service");
  const deployer = new Deployer({ outbound: outboundSinks(outbound), logger, cli: true });
  let signals = 0;
  // Once the deploy is over, a signal ends the wait for its notifications (they are recorded as not sent);
  // one during the deploy stops the script only, and the failure is still announced.
  const outboundCut = new AbortController();
  let deployed = false;
  const stop = () => {
    signals++;
    if (deployed) outboundCut.abort();
    deployer.processes.signal(signals > 1 ? "SIGKILL" : "SIGTERM");
    deployer.stopWaits("by a signal (Ctrl-C)");
  };
  for (const signal of STOP_SIGNALS) process.on(signal, stop);
  let result: DeployResult;
  try {
    result = await start(deployer, (event) => {
      const bytes = transcript.render(event);
      if (bytes && stdoutOpen()) process.stdout.write(bytes);
    });
    deployed = true;
    // The commit status and notifications of this deploy go out before the process ends (each is time-limited).
    await outbound.settle(CLI_OUTBOUND_GRACE_MS, outboundCut.signal);
    // Retention runs after the `[done]` line: the process ends once it has.
    await retentionDone();
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, stop);
  }
  // Exit now rather than set the exit code: a child the script left in the background may still hold its
  // pipes open, and reading them would keep this process alive.
  if (stdoutOpen()) await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
  process.exit(exitCodeOf(result));
}

/** The config file a deploy uses; without one, where it looked and how to use a service's config from elsewhere. */
function configLine(file: string | undefined, cwd: string, dirGiven: boolean): string {
  if (file) return `config: ${file}`;
  const elsewhere = dirGiven ? "" : "; for a service that runs in another directory: service deploy --cwd DIR";
  return `config: none in ${cwd} (defaults and environment only${elsewhere})`;
}

function pickApp(apps: ResolvedApp[], multiApp: boolean, cwd: string, name: string | undefined): ResolvedApp {
  if (!multiApp) {
    // Deploying the one app anyway would deploy something the user did not name.
    if (name)
      throw new Error(
        `--app ${name}: the configuration has no apps (single-app mode); run service deploy without --app`,
      );
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
