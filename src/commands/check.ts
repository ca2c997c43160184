import { defineCommand } from "citty";
import { checkConfig } from "../check.ts";
import { guard } from "./_guard.ts";

export const checkCommand = defineCommand({
  meta: {
    name: "check",
    description:
      "Load the configuration exactly as the server would; print every value (secrets masked) with where it came from " +
      "(default, file, env), and every problem. Exits 1 when there is a problem.",
  },
  run: ({ rawArgs, cmd }) =>
    guard({ rawArgs, cmd }, async () => {
      const report = checkConfig();
      const lines = [`config file: ${report.file ?? "none (defaults and environment only)"}`, ""];
      const width = Math.max(...report.values.map((v) => v.key.length));
      const valueWidth = Math.min(40, Math.max(...report.values.map((v) => v.value.length)));
      for (const { key, value, source } of report.values) lines.push(`  ${key.padEnd(width)}  ${value.padEnd(valueWidth)}  [${source}]`);
      for (const app of report.apps) {
        lines.push("", `  app ${app.name}: POST ${app.host}${app.path}`, `    repo: ${app.repoPath}`, `    secret: ${app.secret}`);
      }
      lines.push("");
      for (const warning of report.warnings) lines.push(`warning: ${warning}`);
      if (report.problems.length === 0) lines.push("no problems found");
      else lines.push(`${report.problems.length} problem${report.problems.length > 1 ? "s" : ""}:`, ...report.problems.map((p) => `  - ${p}`));
      process.stdout.write(`${lines.join("\n")}\n`);
      if (report.problems.length > 0) process.exitCode = 1;
    }),
});
