/**
 * A release build cancelled (docs/deploy-control.md "Cancel"): said as a cancel, by the actor the history records,
 * never as a failed build; the half-built release is removed and `current` stays where it was.
 */
import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { makeGate } from "../_support/gate.ts";
import { post, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";
import { currentRelease, deployStreamed, makeReleasesSite, recordOf } from "../_support/release-helpers.ts";

const ACTOR = `cli:${execFileSync("id", ["-un"], { encoding: "utf8" }).trim()}`;

describe("a cancelled release build", () => {
  test("is said cancelled by the recorded actor in the stream, the record and service logs, not as a failed build", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n", "build.sh": "true\n" });
    const gate = makeGate();
    const env = { ...s.env, ...gate.env, GATE_SCRIPT: gate.script, SERVICE_RUN_SCRIPT: "sh build.sh" };
    await using server = await startServer(s.cwd, env);
    const one = await deployStreamed(server.url, s.cwd);
    expect(one.result.ok).toBe(true);
    // The second build waits at the gate until it is cancelled.
    s.repo.push({ "public/index.html": "v2\n", "build.sh": 'exec "$GATE_SCRIPT"\n' }, "v2");
    const stream = (await post(server.url, { secret: SECRET })).text();
    await waitFor(() => gate.starts()[0], "the build to start");
    const id = gate.starts()[0]!;
    const cancelled = await runCli(["cancel", id], { cwd: s.cwd, env });
    expect(cancelled.code).toBe(0);
    const text = await stream;
    expect(text).toContain(`[deploy] cancelled by ${ACTOR}: stopping its commands`);
    expect(text).toMatch(
      new RegExp(
        `\\[release\\] build cancelled by ${ACTOR}: removed release \\S+; current stays release ${one.result.release.id}`,
      ),
    );
    expect(text).not.toContain("build failed");
    expect(recordOf(s.cwd, text)).toMatchObject({
      status: "cancelled",
      cancel: { by: ACTOR },
      result: { ok: false, error: `cancelled by ${ACTOR}` },
    });
    expect((await runCli(["logs"], { cwd: s.cwd, env })).stdout).toContain(`cancelled by ${ACTOR}`);
    expect(currentRelease(s.site)).toBe(one.result.release.id);
  });
});
