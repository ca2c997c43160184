import { defineCommand } from "citty";
import { resolveApps } from "../config/apps.ts";
import { deploySecrets } from "../config/deploy-secrets.ts";
import { loadConfig } from "../config/load.ts";
import { knownApp } from "../control/actions.ts";
import { Deployer } from "../deploy/deployer.ts";
import { dropRequest, keptRequests } from "../history/requests.ts";
import { Cancellation } from "../queue/cancel.ts";
import { replayedOf } from "../deploy/request.ts";
import { cliActor } from "../system/actor.ts";
import { consola } from "../system/consola.ts";
import { auditCli } from "./_audit.ts";
import { controlDir, cwdArg } from "./_cwd.ts";

/**
 * `service catch-up --drop [--app A]` (docs/deploy-control.md "Catch-up"): the requests a pause or a freeze refused,
 * kept for the catch-up, are dropped; each is recorded `cancelled` under its own actor, saying who dropped it.
 */
export const catchUpCommand = defineCommand({
  meta: {
    name: "catch-up",
    description:
      "The requests a pause or a freeze refused and kept for the catch-up (catchUp): --drop drops them, each recorded cancelled.",
  },
  args: {
    drop: { type: "boolean", description: "Drop the kept requests (each gets a cancelled record)" },
    app: { type: "string", valueHint: "name", description: "Multi-app mode: only this app (default: every app)" },
    cwd: cwdArg,
  },
  async run({ args }) {
    if (!args.drop) throw new Error("service catch-up needs --drop (service status shows what waits)");
    const cwd = controlDir(args.cwd);
    const config = loadConfig({ cwd });
    const apps = resolveApps(config, cwd);
    const chosen = args.app === undefined ? apps : apps.filter((app) => app.name === knownApp(apps, args.app!));
    const by = cliActor();
    const deployer = new Deployer({ cli: true });
    const secrets = deploySecrets(config, apps, cwd, process.env);
    let dropped = 0;
    for (const app of chosen) {
      for (const request of keptRequests(cwd, app.name)) {
        const { actor, ...asked } = replayedOf(request, "catch-up");
        const cancellation = new Cancellation();
        cancellation.cancel("dropped", { by, at: new Date().toISOString() });
        await deployer.recordUnrun(
          { ...asked, ...(actor ? { actor } : {}), app: app.name, config: app, cwd, secrets, cancellation },
          "cancelled",
          `dropped by ${by} (service catch-up --drop)`,
        );
        dropRequest(cwd, request.id);
        auditCli(cwd, { action: "catch-up dropped", app: app.name ?? "default", deploy: request.id, outcome: "ok" });
        dropped++;
      }
    }
    consola.info(
      dropped ? `dropped ${dropped} kept request(s); each is recorded cancelled` : "no request is kept for a catch-up",
    );
  },
});
