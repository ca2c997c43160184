/**
 * Who did what from a shell (docs/log-files.md "Who deployed what", docs/deploy-control.md "Pause and resume"): `service
 * deploy` records `cli:<user>`, a cancel says who cancelled in the deploy's record, a pause and its resume say who
 * and when in the pause file and `service status`. The user is the one of the uid, also without USER (a systemd
 * unit, `env -i`), where the runtime's own user info says "unknown".
 */
import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeGate } from "../_support/gate.ts";
import { logFiles, makeRepo, readJson, runCli, waitFor } from "../_support/helpers.ts";
import { deployIdOf, parseTable, spawnCli } from "../_support/ops-helpers.ts";

const USER = execFileSync("id", ["-un"], { encoding: "utf8" }).trim();
/** The environment of a systemd unit: no USER, no LOGNAME. */
const NO_USER = { USER: undefined, LOGNAME: undefined };

describe("who acted from a shell, with USER unset", () => {
  test("service deploy records cli:<user>; pause, status and resume say who paused, why and when, then who resumed", async () => {
    const repo = makeRepo();
    const cwd = repo.clone;
    const deployed = await runCli(["deploy"], { cwd, env: { ...NO_USER, SERVICE_RUN_SCRIPT: "true" } });
    expect(deployed.code).toBe(0);
    expect(deployed.stdout).toContain(` by cli:${USER}\n`);
    const id = deployIdOf(deployed.stdout);
    const name = logFiles(cwd).find((file) => file.endsWith(`_${id}.json`))!;
    expect(readJson(join(cwd, ".service", "logs", name)).actor).toBe(`cli:${USER}`);

    expect((await runCli(["pause", "--reason", "db migration"], { cwd, env: NO_USER })).code).toBe(0);
    const file = JSON.parse(readFileSync(join(cwd, ".service", "paused", "service.json"), "utf8"));
    expect(file).toMatchObject({ reason: "db migration", by: `cli:${USER}` });
    const paused = await runCli(["status"], { cwd, env: NO_USER });
    expect(paused.stdout).toContain(`paused:  yes, since ${file.since} by cli:${USER} (db migration)`);
    const refused = await runCli(["deploy"], { cwd, env: { ...NO_USER, SERVICE_RUN_SCRIPT: "true" } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`deploys are paused: db migration (since ${file.since}, by cli:${USER};`);

    expect((await runCli(["resume"], { cwd, env: NO_USER })).code).toBe(0);
    const status = JSON.parse((await runCli(["status", "--json"], { cwd, env: NO_USER })).stdout)[0];
    expect(status.paused).toBeNull();
    expect(status.resumed).toMatchObject({ by: `cli:${USER}`, pause: { reason: "db migration", by: `cli:${USER}` } });
    expect(Number.isNaN(Date.parse(status.resumed.at))).toBe(false);
    expect((await runCli(["status"], { cwd, env: NO_USER })).stdout).toContain(
      `paused:  no (resumed ${status.resumed.at} by cli:${USER}; paused by cli:${USER}: db migration)`,
    );
  });

  test("a deploy cancelled from another shell: its record says who cancelled it and when, and service logs shows it", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    await using running = spawnCli(["deploy"], {
      cwd: repo.clone,
      env: { ...NO_USER, SERVICE_RUN_SCRIPT: gate.script, ...gate.env },
    });
    const [id] = await waitFor(() => (gate.starts().length === 1 ? gate.starts() : undefined), "the deploy to start");
    const cancelled = await runCli(["cancel", id!], { cwd: repo.clone, env: NO_USER });
    expect(cancelled.code).toBe(0);
    expect(await running.exited).toBe(1);
    const name = logFiles(repo.clone).find((file) => file.endsWith(`_${id}.json`))!;
    const record = readJson(join(repo.clone, ".service", "logs", name));
    expect(record.status).toBe("cancelled");
    expect(record.cancel.by).toBe(`cli:${USER}`);
    expect(Date.parse(record.cancel.at)).toBeGreaterThanOrEqual(Date.parse(record.startedAt));
    expect(record.result.error).toBe(`cancelled by cli:${USER}`);
    const rows = parseTable((await runCli(["logs"], { cwd: repo.clone })).stdout);
    expect(rows[0]!.RESULT).toBe(`cancelled by cli:${USER}`);
  });
});
