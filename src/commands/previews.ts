/**
 * `service previews [--app A] [--json]`: the previews of pull requests and the refusals at the door.
 * `service preview deploy <n>` (an open pull request by hand, its pull ref's head now) and `service preview
 * teardown <n>` (docs/previews.md "Operating").
 */
import { defineCommand } from "citty";
import { resolveApps } from "../config/apps.ts";
import { loadConfig } from "../config/load.ts";
import { knownApp } from "../control/actions.ts";
import { consola } from "../system/consola.ts";
import { unixUser } from "../system/user.ts";
import { controlDir, cwdArg } from "./_cwd.ts";
import { audited } from "./_audit.ts";

const appArg = { type: "string", valueHint: "name", description: "Multi-app mode: this app" } as const;

export const previewsCommand = defineCommand({
  meta: {
    name: "previews",
    description: "The previews of pull requests: each one's status and URL, and the refusals.",
  },
  args: {
    app: appArg,
    json: { type: "boolean", description: "Print them as JSON (one object per app), for scripts" },
    cwd: cwdArg,
  },
  async run({ args }) {
    const cwd = controlDir(args.cwd);
    const apps = resolveApps(loadConfig({ cwd }), cwd);
    const app = knownApp(apps, args.app);
    const { previewLines, previewList } = await import("../previews/listing.ts");
    const list = previewList(cwd, apps, app);
    if (list.length === 0) throw new Error(`no app sets previews${app ? ` (app "${app}")` : ""}`);
    process.stdout.write(args.json ? `${JSON.stringify(list, null, 2)}\n` : `${previewLines(list).join("\n")}\n`);
  },
});

export const previewCommand = defineCommand({
  meta: {
    name: "preview",
    description:
      "deploy <n>: build the preview of open pull request <n> at its pull ref's head now, and wait for it. " +
      "teardown <n>: its teardown script, what it left running, its directory and port.",
  },
  args: {
    action: { type: "positional", required: true, description: "deploy | teardown" },
    number: { type: "positional", required: true, description: "The pull request's number" },
    app: appArg,
    cwd: cwdArg,
  },
  async run({ args }) {
    const cwd = controlDir(args.cwd);
    if (args.action !== "deploy" && args.action !== "teardown")
      throw new Error(`unknown action "${args.action}": service preview deploy <n> or teardown <n>`);
    if (!/^\d{1,9}$/.test(args.number) || Number(args.number) < 1)
      throw new Error(`"${args.number}" is not a pull request's number`);
    const number = Number(args.number);
    const apps = resolveApps(loadConfig({ cwd }), cwd);
    const name = knownApp(apps, args.app);
    const app = apps.find((a) => a.name === name && a.previews) ?? (name ? undefined : apps.find((a) => a.previews));
    if (!app?.previews) throw new Error(`no app sets previews${name ? ` (app "${name}")` : ""}`);
    const { Previews } = await import("../previews/manager.ts");
    const manager = new Previews({ cwd, logger: consola, apps: () => apps });
    const appName = app.name ?? "default";
    const withPreviews = app as typeof app & { previews: NonNullable<typeof app.previews> };
    if (args.action === "deploy") {
      const answer = await audited(cwd, { action: "preview deploy", app: appName, target: `#${number}` }, () =>
        manager.deployByHand(withPreviews, number, unixUser()),
      );
      if (answer.outcome !== "accepted") throw new Error(answer.text);
      consola.info(answer.text);
      const { readPreviews } = await import("../previews/state.ts");
      if (readPreviews(cwd, appName).previews.find((p) => p.number === number)?.status !== "running")
        process.exitCode = 1;
      return;
    }
    const { readPreviews } = await import("../previews/state.ts");
    if (!readPreviews(cwd, appName).previews.some((p) => p.number === number))
      throw new Error(`pull request #${number} has no preview`);
    await audited(cwd, { action: "preview teardown", app: appName, target: `#${number}` }, () =>
      manager.teardown(withPreviews, number, "by hand"),
    );
    const left = readPreviews(cwd, appName).previews.find((p) => p.number === number);
    if (left) throw new Error(`pull request #${number}: ${left.status}: ${left.reason ?? ""}`);
    consola.info(`pull request #${number}: its preview is torn down`);
  },
});
