import { defineCommand } from "citty";
import { loadConfig } from "../config.ts";
import { Transcript } from "../deploy/events.ts";
import { Deployer } from "../deploy/pipeline.ts";
import { killGroup, livePids } from "../deploy/process.ts";
import { guard } from "./_guard.ts";

export const deployCommand = defineCommand({
  meta: {
    name: "deploy",
    description:
      "Run one deploy now in the current repository directory (git pull, then the run script), printing its output live. " +
      "Uses the same config, queue and logs as the server. Exits 0 only when the deploy is ok.",
  },
  run: () =>
    guard(async () => {
      const config = loadConfig();
      const transcript = new Transcript();
      // A closed stdout (`service deploy | head`) must not stop the deploy: it goes on, and its logs complete.
      let stdoutOpen = true;
      process.stdout.on("error", () => {
        stdoutOpen = false;
      });
      // Ctrl-C stops the run script's whole process tree; the deploy still ends and writes its logs.
      let signals = 0;
      const stop = () => {
        signals++;
        for (const pid of livePids) killGroup(pid, signals > 1 ? "SIGKILL" : "SIGTERM");
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
      const result = await new Deployer().deploy({
        config,
        trigger: "cli",
        cwd: process.cwd(),
        sink: (event) => {
          const bytes = transcript.render(event);
          if (bytes && stdoutOpen) process.stdout.write(bytes);
        },
      });
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      // Exit now: a child the script left in the background may still hold its pipes open.
      if (stdoutOpen) await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
      process.exit(result.ok ? 0 : 1);
    }),
});
