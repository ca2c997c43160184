import { defineCommand } from "citty";
import { cancelDeploy, cancelledBy } from "../queue/cancel.ts";
import { consola } from "../system/consola.ts";
import { controlDir, cwdArg } from "./_cwd.ts";
import { audited } from "./_audit.ts";

export const cancelCommand = defineCommand({
  meta: {
    name: "cancel",
    description:
      "Cancel a deploy by id (or the start of it): a waiting one leaves the queue; a running one has its commands " +
      "stopped (TERM, then KILL) and is rolled back when rollbackOnFailure is on. Works whether the deploy runs in the " +
      "server or in a service deploy elsewhere. Exits 1 when the deploy is unknown or already finished.",
  },
  args: {
    id: { type: "positional", required: true, description: "The deploy id, as service logs shows it" },
    cwd: cwdArg,
  },
  async run({ args }) {
    const cwd = controlDir(args.cwd);
    const outcome = await audited(cwd, { action: "cancel", deploy: args.id }, () =>
      cancelDeploy(cwd, args.id, cancelledBy()),
    );
    if (outcome.watchEnded)
      consola.info(`deploy ${outcome.id} cancelled: its watch ended, what went live stays (recorded ok)`);
    else if (outcome.state === "cancelled") consola.info(`deploy ${outcome.id} cancelled`);
    else
      consola.info(
        `deploy ${outcome.id} is being cancelled (its rollback may still run): follow it with service logs ${outcome.id.slice(0, 8)} --follow`,
      );
  },
});
