import { defineCommand } from "citty";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { appSecretFile, type ResolvedApp, resolveApps } from "../config/apps.ts";
import { loadConfig } from "../config/load.ts";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import { SECRET_FILE } from "../config/secret.ts";
import { systemdUnit, unitUser } from "../ops/systemd.ts";
import { selfCommand } from "../system/self.ts";

export const systemdCommand = defineCommand({
  meta: {
    name: "systemd",
    description:
      "Print a systemd unit that runs this server with the current directory and config (or write it with --output).",
  },
  args: {
    user: { type: "string", description: "User to run as (default: the user who ran sudo, else the current user)" },
    output: { type: "string", alias: "o", description: "Write the unit to this file instead of printing it" },
  },
  async run({ args }) {
    const cwd = process.cwd();
    const user = unitUser(args.user);
    const config = loadConfig();
    const apps = resolveApps(config, cwd);
    const unit = systemdUnit({ workingDirectory: cwd, execStart: selfCommand(), user, apps });
    // A secret generated at the first start is printed then: under systemd, into the journal.
    for (const name of secretsMissing(config, apps, cwd))
      process.stderr.write(
        `no webhook secret yet${name === undefined ? "" : ` for app "${name}"`}: create it before the first start with: service secret rotate${name === undefined ? "" : ` --app ${name}`} (a secret generated at the first start is printed into the journal)\n`,
      );
    if (!args.output) return void process.stdout.write(unit);
    const file = resolve(cwd, args.output);
    writeFileSync(file, unit);
    process.stdout.write(
      `Wrote ${file}. Enable it with:\n  sudo cp ${file} /etc/systemd/system/service.service\n  sudo systemctl daemon-reload && sudo systemctl enable --now service\n`,
    );
  },
});

/** The apps (undefined: the single app) whose webhook secret is neither configured nor generated yet. */
function secretsMissing(config: ResolvedConfig, apps: ResolvedApp[], cwd: string): (string | undefined)[] {
  if (config.apps.length === 0) return config.secret || existsSync(join(cwd, SECRET_FILE)) ? [] : [undefined];
  return apps.filter((app) => !app.secret && !existsSync(appSecretFile(cwd, app.name!))).map((app) => app.name);
}
