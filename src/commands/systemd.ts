import { defineCommand } from "citty";
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { resolveApps } from "../config/apps.ts";
import { loadConfig } from "../config/load.ts";
import { currentExecStart, systemdUnit, unitUser } from "../ops/systemd.ts";

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
    const unit = systemdUnit({
      workingDirectory: cwd,
      execStart: currentExecStart(),
      user,
      apps: resolveApps(config, cwd),
    });
    if (!args.output) return void process.stdout.write(unit);
    const file = resolve(cwd, args.output);
    writeFileSync(file, unit);
    process.stdout.write(
      `Wrote ${file}. Enable it with:\n  sudo cp ${file} /etc/systemd/system/service.service\n  sudo systemctl daemon-reload && sudo systemctl enable --now service\n`,
    );
  },
});
