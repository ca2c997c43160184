import { defineCommand } from "citty";
import { AlreadyLiveError, rollbackDeploy } from "../control/rollback.ts";
import { cwdArg } from "./_cwd.ts";
import { audited } from "./_audit.ts";
import { cliActor } from "../system/actor.ts";
import { chooseApp, commandSecrets, printLive, refuseWhilePaused } from "./deploy.ts";

export const rollbackCommand = defineCommand({
  meta: {
    name: "rollback",
    description:
      "Deploy an earlier commit (git reset --hard, the run script, the health check) through the same queue and logs, " +
      "printing it live. Exits 0 when it is ok, 1 when it failed, 3 when it failed and was rolled back.",
  },
  args: {
    target: {
      type: "positional",
      required: false,
      description:
        "A deploy id, an id prefix or last-ok (the commit that deploy left checked out), or a commit of the repository " +
        "(default: the commit of the newest ok deploy other than the current HEAD)",
    },
    app: {
      type: "string",
      description: "Multi-app mode: the app to roll back (default: the app whose repoPath is the current directory)",
    },
    force: { type: "boolean", description: "Roll back even while deploys are paused (service pause)" },
    cwd: cwdArg,
  },
  async run({ args }) {
    const { cwd, config, apps, app } = chooseApp(args);
    const target = typeof args.target === "string" && args.target !== "" ? args.target : undefined;
    const asked = { action: "rollback" as const, app: app.name ?? "default", target, force: args.force };
    await audited(cwd, asked, () => refuseWhilePaused(cwd, app, args.force));
    // Nothing to roll back is no failure (docs/cli.md "Exit codes"): one line, exit 0, nothing recorded.
    try {
      await printLive((deployer, sink) =>
        rollbackDeploy(
          deployer,
          target,
          {
            config: app,
            app: app.name,
            actor: cliActor(),
            cwd,
            secrets: commandSecrets(config, apps, cwd),
            sink,
          },
          { force: args.force },
        ),
      );
    } catch (error) {
      if (!(error instanceof AlreadyLiveError)) throw error;
      process.stdout.write(`${error.message}\n`);
    }
  },
});
