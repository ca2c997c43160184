import { defineCommand } from "citty";
import { FORMATS } from "../config/schema-notify.ts";
import { checkConfig } from "../ops/check.ts";
import { sendTestNotifications } from "../notify/inspect.ts";
import { cwdArg, serviceDir } from "./_cwd.ts";

export const notifyCommand = defineCommand({
  meta: {
    name: "notify",
    description:
      "`service notify test`: send a test message to each configured notification channel and print each outcome " +
      "(exits 1 when one failed).",
  },
  args: {
    action: { type: "positional", required: true, description: "test" },
    app: { type: "string", description: "Only this app's channels" },
    format: { type: "string", description: `Only the channels of this format (${FORMATS.join(", ")})` },
    cwd: cwdArg,
  },
  async run({ args }) {
    if (args.action !== "test") throw new Error(`unknown action "${args.action}" (expected: service notify test)`);
    if (args.format !== undefined && !(FORMATS as readonly string[]).includes(args.format))
      throw new Error(`unknown format "${args.format}" (formats: ${FORMATS.join(", ")})`);
    const cwd = serviceDir(args.cwd);
    const report = await checkConfig(cwd);
    if (report.problems.length > 0)
      throw new Error(`the configuration has problems (service check lists them): ${report.problems.join("; ")}`);
    let apps = report.outbound;
    if (args.app !== undefined) {
      apps = apps.filter((app) => (app.name ?? "default") === args.app);
      if (apps.length === 0)
        throw new Error(
          `no app "${args.app}" (apps: ${report.outbound.map((app) => app.name ?? "default").join(", ") || "none"})`,
        );
    }
    const sent = await sendTestNotifications(apps, process.env, cwd, {
      ...(args.format !== undefined ? { format: args.format } : {}),
      command: "service notify test",
    });
    process.stdout.write(`${sent.lines.join("\n")}\n`);
    if (sent.failed > 0) process.exitCode = 1;
  },
});
