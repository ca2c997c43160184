/**
 * A ref or a commit subject is chosen by whoever pushes: `service logs` and `service status` show it without the
 * marks that would reorder the terminal's line, drive it or hide characters (src/system/shown.ts).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { git, makeRepo, runCli } from "../_support/helpers.ts";

/** A right-to-left override, a soft hyphen, a combining grapheme joiner, a tag character and a C1 control (CSI). */
const MARKS = /[\u202E\u00AD\u{E0041}\u009B]|\u034F/u;
const HOSTILE = "fix\u202Eevil\u00ADx\u034Fy\u{E0041}z\u009Bw";
const SHOWN = "fixevilxyzw";

describe("text from outside in the CLI", () => {
  test("a branch and a commit subject with a right-to-left override, a soft hyphen, U+034F, a tag character and a C1 control, deployed with --ref: service logs prints them without those characters", async () => {
    const repo = makeRepo();
    const pusher = join(repo.dir, "pusher");
    git(pusher, "checkout", "--quiet", "-b", HOSTILE);
    git(pusher, "commit", "--quiet", "--allow-empty", "-m", `subject ${HOSTILE}`);
    git(pusher, "push", "--quiet", "origin", HOSTILE);
    const deployed = await runCli(["deploy", "--ref", HOSTILE], {
      cwd: repo.clone,
      env: { SERVICE_RUN_SCRIPT: "true" },
    });
    expect(deployed.code).toBe(0);

    const logs = await runCli(["logs"], { cwd: repo.clone });
    expect(logs.code).toBe(0);
    expect(logs.stdout).toContain(`subject ${SHOWN} [ref ${SHOWN}]`);
    expect(logs.stdout).not.toMatch(MARKS);
    // The JSON keeps the ref as it was asked for.
    const json = await runCli(["logs", "--json"], { cwd: repo.clone });
    expect(JSON.parse(json.stdout)[0].ref).toBe(HOSTILE);
  });

  test("an error line that quotes a ref given on the command line prints it without those characters", async () => {
    const repo = makeRepo();
    const refused = await runCli(["deploy", "--ref", `nothing-${HOSTILE}`], {
      cwd: repo.clone,
      env: { SERVICE_RUN_SCRIPT: "true" },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`"nothing-${SHOWN}" names no deploy`);
    expect(refused.stderr).not.toMatch(MARKS);
  });

  test("a pause reason with the same characters: service status prints it without them", async () => {
    const repo = makeRepo();
    const env = { SERVICE_RUN_SCRIPT: "true" };
    const paused = await runCli(["pause", "--reason", `freeze ${HOSTILE}`], { cwd: repo.clone, env });
    expect(paused.code).toBe(0);
    const status = await runCli(["status"], { cwd: repo.clone, env });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`(freeze ${SHOWN})`);
    expect(status.stdout).not.toMatch(MARKS);
  });
});
