/**
 * docs/audit.md: the commands run in a shell write the trail as `cli:<user>` (deploy, rollback, cancel, pause,
 * resume; a refusal too); `service audit` shows and filters it; `service audit --verify` says whether it is whole.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { makeRepo, runCli } from "../_support/helpers.ts";

const auditFile = (cwd: string) => {
  const dir = join(cwd, ".service", "audit");
  const name = readdirSync(dir).find((n) => n.endsWith(".jsonl"))!;
  return join(dir, name);
};

describe("service audit and the commands that write it", () => {
  test("pause, a refused deploy, resume, a forced deploy: each a line of cli:<user>; filtered; verified; an edit found", async () => {
    const repo = makeRepo();
    const cwd = repo.clone;
    const env = { SERVICE_RUN_SCRIPT: "true" };
    const cli = (args: string[]) => runCli(args, { cwd, env });
    expect((await cli(["pause", "--reason", "upgrade"])).code).toBe(0);
    expect((await cli(["deploy"])).code).toBe(1);
    expect((await cli(["deploy", "--force", "--skip-gate"])).code).toBe(0);
    expect((await cli(["resume"])).code).toBe(0);
    expect((await cli(["resume"])).code).toBe(1);

    const listed = await cli(["audit", "--json"]);
    expect(listed.code).toBe(0);
    const lines = JSON.parse(listed.stdout) as Record<string, unknown>[];
    const name = execFileSync("id", ["-un"], { encoding: "utf8" }).trim();
    const user = `cli:${name}`;
    expect(
      lines.map(({ actor, action, outcome, force, skipGate }) => ({ actor, action, outcome, force, skipGate })),
    ).toEqual([
      { actor: user, action: "pause", outcome: "ok", force: undefined, skipGate: undefined },
      { actor: user, action: "deploy asked", outcome: "refused", force: undefined, skipGate: undefined },
      { actor: user, action: "deploy asked", outcome: "ok", force: true, skipGate: true },
      { actor: user, action: "resume", outcome: "ok", force: undefined, skipGate: undefined },
      { actor: user, action: "resume", outcome: "refused", force: undefined, skipGate: undefined },
    ]);
    expect(lines[1]!.reason).toContain("deploys are paused");

    const shownText = (await cli(["audit"])).stdout;
    expect(shownText.trim().split("\n")).toHaveLength(5);
    expect(shownText).toContain("deploy asked  default  force  skip-gate  → ok");
    expect(JSON.parse((await cli(["audit", "--json", "--actor", "nobody"])).stdout)).toEqual([]);
    expect(JSON.parse((await cli(["audit", "--json", "--actor", name, "--since", "1h"])).stdout)).toHaveLength(5);
    const badSince = await cli(["audit", "--since", "yesterday"]);
    expect(badSince.code).toBe(1);
    expect(badSince.stderr).toContain("--since expects");

    const verified = await cli(["audit", "--verify"]);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toBe("the audit trail is whole: 5 lines, each following the one before\n");

    // Someone who can write the file hides the forced deploy.
    const file = auditFile(cwd);
    const kept = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => !line.includes('"force":true'));
    writeFileSync(file, kept.join("\n"));
    const broken = await cli(["audit", "--verify"]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain("the audit trail was changed");
    expect(broken.stderr).toContain("line 3: does not follow the line before it");
  });
});
