import { defineCommand } from "citty";
import type { AuditLine } from "../audit/entry.ts";
import { readAudit } from "../audit/read.ts";
import { auditDir } from "../audit/trail.ts";
import { verifyTrail } from "../audit/verify.ts";
import { parseSince } from "../history/filter.ts";
import { shown } from "../system/shown.ts";
import { controlDir, cwdArg } from "./_cwd.ts";

/** One line of the trail as the terminal shows it: time, actor@address, action, app, what, outcome. */
function describe(line: AuditLine): string {
  const who = line.address ? `${line.actor}@${line.address}` : line.actor;
  const extras = [
    line.app,
    line.target,
    line.deploy ? `deploy ${line.deploy.slice(0, 8)}` : undefined,
    line.method ? `(${line.method})` : undefined,
    line.via ? `via ${line.via}` : undefined,
    line.force ? "force" : undefined,
    line.skipGate ? "skip-gate" : undefined,
    line.keys ? `keys: ${line.keys.join(", ")}` : undefined,
  ].filter(Boolean);
  const outcome = line.outcome === "ok" ? "ok" : `${line.outcome}${line.reason ? `: ${line.reason}` : ""}`;
  return shown([line.time, who, line.action, ...extras, `→ ${outcome}`].join("  "));
}

export const auditCommand = defineCommand({
  meta: {
    name: "audit",
    description:
      "Show the audit trail (.service/audit/): who deployed, rolled back, cancelled, paused, logged in, and when. " +
      "--verify checks that no line was edited, removed or reordered and that the end was not cut; exits 1 when one was.",
  },
  args: {
    since: {
      type: "string",
      valueHint: "when",
      description: "Only lines since then: a duration back from now (30m, 2h, 7d) or a date or time (2026-05-01, UTC)",
    },
    actor: {
      type: "string",
      valueHint: "who",
      description: "Only this actor: token:ci-web, cli:alice, or the name alone (ci-web, alice)",
    },
    app: { type: "string", valueHint: "name", description: "Only the lines of this app" },
    json: { type: "boolean", description: "Print the lines as JSON (a list), for scripts" },
    verify: { type: "boolean", description: "Check the chain of hashes instead of printing the lines" },
    cwd: cwdArg,
  },
  run({ args }) {
    const dir = auditDir(controlDir(args.cwd));
    if (args.verify) {
      const { lines, problems } = verifyTrail(dir);
      if (problems.length > 0)
        throw new Error(`the audit trail was changed:\n${problems.map((p) => `  ${p}`).join("\n")}`);
      process.stdout.write(
        `the audit trail is whole: ${lines} line${lines === 1 ? "" : "s"}, each following the one before\n`,
      );
      return;
    }
    let since: number | undefined;
    if (args.since !== undefined) {
      try {
        since = parseSince(args.since);
      } catch (error) {
        throw new Error(`--since ${(error as Error).message}`);
      }
    }
    const lines = readAudit(dir, {
      ...(since !== undefined ? { since } : {}),
      ...(args.actor ? { actor: args.actor } : {}),
      ...(args.app ? { app: args.app } : {}),
    });
    if (args.json) process.stdout.write(`${JSON.stringify(lines, null, 2)}\n`);
    else if (lines.length === 0) process.stdout.write("no audit lines\n");
    else process.stdout.write(`${lines.map(describe).join("\n")}\n`);
  },
});
