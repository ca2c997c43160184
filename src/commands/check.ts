import { defineCommand } from "citty";
import { checkConfig, type CheckedValue } from "../ops/check.ts";
import { signatureVerdicts } from "../ops/check-guard.ts";
import { secretSourceFindings } from "../ops/check-secrets.ts";
import { problemLines } from "../ops/start-check.ts";
import { sendTestNotifications } from "../notify/inspect.ts";
import { cwdArg, serviceDir } from "./_cwd.ts";

export const checkCommand = defineCommand({
  meta: {
    name: "check",
    description:
      "Load the configuration exactly as the server would; print every value (secrets masked) with where it came from " +
      "(default, file, env), and every problem. Exits 1 when there is a problem.",
  },
  args: {
    cwd: cwdArg,
    "send-test": {
      type: "boolean",
      description:
        "Also send one test notification to every `notify` target and print each answer (exits 1 when one fails)",
    },
    problems: {
      type: "boolean",
      description:
        "Print only the configuration's problems, one per line (a problem's further lines indented by two spaces), as " +
        "the server says them when it starts: no values, and no envCommand, age file or signature looked at; exits 1 when there is one",
    },
    secrets: {
      type: "boolean",
      default: true,
      description:
        "Run envCommand and open an age-encrypted envFile, listing the names they give (never a value); --no-secrets does not run envCommand",
    },
  },
  async run({ args }) {
    const cwd = serviceDir(args.cwd);
    const report = await checkConfig(cwd);
    if (args.problems) {
      process.stdout.write(problemLines(report.problems));
      if (report.problems.length > 0) process.exitCode = 1;
      return;
    }
    const lines = [`config file: ${report.file ?? "none (defaults and environment only)"}`, ""];
    lines.push(...valueTable(report.values), "", `build slots: ${report.slots}`);
    for (const app of report.apps) {
      lines.push(
        "",
        `  app ${app.name}: POST ${app.host}${app.path}`,
        `    repo: ${app.repoPath}`,
        `    secret: ${app.secret}`,
        ...app.settings.map(({ label, value }) => `    ${label}: ${value}`),
      );
      if (app.status) lines.push(`    status: ${app.status}`);
      if (app.notify) lines.push(`    notify: ${app.notify}`);
      if (app.env) lines.push(`    env: ${app.env}`);
      if (app.allowedSigners) lines.push(`    allowedSigners: ${app.allowedSigners}`);
      if (app.releases) lines.push(`    releases: ${app.releases}`);
    }
    const verdicts = await signatureVerdicts(report.guarded, cwd, process.env);
    if (verdicts.length > 0) lines.push("", ...verdicts);
    // citty reads `--no-secrets` as `secrets: false`.
    const secrets = await secretSourceFindings(report.guarded, cwd, process.env, args.secrets !== false);
    if (secrets.lines.length > 0) lines.push("", ...secrets.lines);
    report.problems.push(...secrets.problems);
    report.warnings.push(...secrets.warnings);
    lines.push("");
    for (const warning of report.warnings) lines.push(`warning: ${warning}`);
    if (report.problems.length === 0) lines.push("no problems found");
    else
      lines.push(
        `${report.problems.length} problem${report.problems.length > 1 ? "s" : ""}:`,
        ...report.problems.map((p) => `  - ${p}`),
      );
    let failed = 0;
    if (args["send-test"]) {
      const sent = await sendTestNotifications(report.outbound, process.env, cwd);
      lines.push("", "test notifications:", ...sent.lines.map((line) => `  ${line}`));
      failed = sent.failed;
    }
    process.stdout.write(`${lines.join("\n")}\n`);
    if (report.problems.length > 0 || failed > 0) process.exitCode = 1;
  },
});

/**
 * `  key  value  [source]` rows. A multi-line value (a runScript block) goes on under its first line, each line
 * indented to the value column, so the table still reads as one row per key.
 */
function valueTable(values: CheckedValue[]): string[] {
  const linesOf = (value: string) =>
    value
      .replace(/\s+$/, "")
      .split("\n")
      .map((line) => line.trimEnd());
  const width = Math.max(...values.map((v) => v.key.length));
  const valueWidth = Math.min(40, Math.max(...values.flatMap((v) => linesOf(v.value).map((line) => line.length))));
  const indent = " ".repeat(2 + width + 2);
  return values.flatMap(({ key, value, source }) => {
    const [first = "", ...rest] = linesOf(value);
    return [
      `  ${key.padEnd(width)}  ${first.padEnd(valueWidth)}  [${source}]`,
      ...rest.map((line) => (line ? `${indent}${line}` : "")),
    ];
  });
}
