import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { makeGate, StreamReader, startGated } from "../_support/gate.ts";
import {
  lastLine,
  logFiles,
  makeRepo,
  post,
  readJson,
  runCli,
  SECRET,
  startServer,
  waitFor,
  defer,
} from "../_support/helpers.ts";
import { spawnDeploy } from "../_support/queueing.ts";

/** The shell's user, by uid even when USER is unset (the runtime's own user info then says "unknown"). */
const BY = `by cli:${execFileSync("id", ["-un"], { encoding: "utf8" }).trim()}`;

/** The ids of the deploys waiting in the queue of the service in `cwd`. */
function queuedIds(cwd: string): string[] {
  const dir = join(cwd, ".service", "requests");
  return existsSync(dir) ? readdirSync(dir).map((name) => name.replace(/\.json$/, "")) : [];
}

function record(cwd: string, id: string) {
  const name = logFiles(cwd).find((file) => file.endsWith(`_${id}.json`));
  return name ? readJson(join(cwd, ".service", "logs", name)) : undefined;
}

describe("service cancel", () => {
  test("a waiting deploy leaves the queue: its client gets [done] ok=false after a line saying who cancelled it; its logs say so", async () => {
    await using gated = await startGated();
    const { repo, gate, env, server } = gated;
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    const second = new StreamReader(await post(server.url, { secret: SECRET }));
    const [id] = await waitFor(
      () => (queuedIds(repo.clone).length === 1 ? queuedIds(repo.clone) : undefined),
      "the second deploy to queue",
    );
    const cancelled = await runCli(["cancel", id!.slice(0, 8)], { cwd: repo.clone, env });
    expect(cancelled.stderr + cancelled.stdout).toContain(`deploy ${id} cancelled`);
    expect(cancelled.code).toBe(0);
    const text = await second.done;
    const lines = text.trimEnd().split("\n");
    expect(lines.at(-2)).toBe(`[deploy] cancelled before it started: ${BY}`);
    expect(lines.at(-1)).toBe("[done] ok=false exitCode=null");
    expect(record(repo.clone, id!)).toMatchObject({
      status: "cancelled",
      result: { ok: false, error: `cancelled: ${BY}` },
    });
    const logs = await runCli(["logs"], { cwd: repo.clone, env });
    expect(logs.stdout).toContain("cancelled");
    gate.open();
    expect(lastLine(await first.done)).toBe("[done] ok=true exitCode=0");
    expect(gate.starts()).toEqual([first.id()!]);
  });

  test("a running deploy has its process tree stopped: ok=false, error says it was cancelled, status cancelled", async () => {
    await using gated = await startGated();
    const { repo, gate, env, server } = gated;
    // A JSON answer comes when the deploy ends.
    const res = post(`${server.url}?format=json`, { secret: SECRET });
    await waitFor(() => gate.lines().length === 1, "the deploy to start");
    const id = gate.starts()[0]!;
    const cancelled = await runCli(["cancel", id], { cwd: repo.clone, env });
    expect(cancelled.code).toBe(0);
    const result = await (await res).json();
    expect(result).toMatchObject({ id, ok: false, error: `cancelled ${BY}`, rolledBack: false });
    expect(record(repo.clone, id)).toMatchObject({ status: "cancelled" });
    const log = readFileSync(join(repo.clone, result.log.log), "utf8");
    expect(log).toContain(`[deploy] cancelled ${BY}: stopping its commands`);
    // The script never reached its end: it was stopped, not let through.
    expect(gate.lines()).toEqual([`start ${id} webhook`]);
  });

  test("a command that ignores TERM is killed after the grace period", async () => {
    const repo = makeRepo();
    const env = {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "sh -c 'trap \"\" TERM; echo up; while true; do sleep 0.05; done'",
    };
    await using server = await startServer(repo.clone, env);
    const reader = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => reader.text.includes("up\n"), "the script to start");
    const cancelled = await runCli(["cancel", reader.id()!], { cwd: repo.clone, env });
    expect(cancelled.code).toBe(0);
    expect(lastLine(await reader.done)).toBe("[done] ok=false exitCode=137");
  });

  test("rollback applies to a cancelled deploy when rollbackOnFailure is on", async () => {
    const repo = makeRepo({ "deploy.sh": "echo v1\n" });
    const good = repo.head();
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "sh deploy.sh", SERVICE_ROLLBACK_ON_FAILURE: "true" };
    await using server = await startServer(repo.clone, env);
    repo.push({ "deploy.sh": "echo v2\nwhile true; do sleep 0.05; done\n" });
    // A JSON answer comes when the deploy ends.
    const res = post(`${server.url}?format=json`, { secret: SECRET });
    const id = await waitFor(
      () => logFiles(repo.clone)[0]?.match(/_([0-9a-f-]{36})\.json$/)?.[1],
      "the deploy to start",
    );
    await waitFor(
      () =>
        logFiles(repo.clone).some(
          (f) => f.endsWith(".log") && readFileSync(join(repo.clone, ".service", "logs", f), "utf8").includes("v2\n"),
        ),
      "the new script to run",
    );
    expect((await runCli(["cancel", id], { cwd: repo.clone, env })).code).toBe(0);
    const result = await (await res).json();
    expect(result).toMatchObject({ ok: false, rolledBack: true, rollback: { to: good, ok: true } });
    expect(result.error).toStartWith("cancelled");
    expect(repo.head()).toBe(good);
    expect(record(repo.clone, id)).toMatchObject({ status: "cancelled" });
  });

  test("works across processes: a `service deploy` running in a shell is cancelled from another", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const env = { SERVICE_RUN_SCRIPT: gate.script, ...gate.env };
    using _gateOpened = defer(() => gate.open());
    await using cli = spawnDeploy(repo.clone, env);
    await waitFor(() => gate.lines().length === 1, "the deploy to start");
    const id = gate.starts()[0]!;
    expect((await runCli(["cancel", id], { cwd: repo.clone, env })).code).toBe(0);
    expect(await cli.proc.exited).toBe(1);
    const text = await cli.out.done;
    expect(text).toContain(`[deploy] cancelled ${BY}`);
    expect(record(repo.clone, id)).toMatchObject({ status: "cancelled" });
  });

  test("works across processes: a `service deploy` waiting behind the server's deploy leaves the queue", async () => {
    await using gated = await startGated();
    const { repo, gate, env, server } = gated;
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the server's deploy to start");
    await using cli = spawnDeploy(repo.clone, env);
    const [id] = await waitFor(
      () => (queuedIds(repo.clone).length === 1 ? queuedIds(repo.clone) : undefined),
      "the shell's deploy to queue",
    );
    expect((await runCli(["cancel", id!], { cwd: repo.clone, env })).code).toBe(0);
    expect(await cli.proc.exited).toBe(1);
    expect((await cli.out.done).trimEnd().split("\n").slice(-2)).toEqual([
      `[deploy] cancelled before it started: ${BY}`,
      "[done] ok=false exitCode=null",
    ]);
    gate.open();
    expect(lastLine(await first.done)).toBe("[done] ok=true exitCode=0");
    expect(gate.starts()).toEqual([first.id()!]);
  });

  test("bad input: an unknown id, a deploy already finished, something that is not an id: one line and exit 1", async () => {
    const repo = makeRepo();
    const env = { SERVICE_RUN_SCRIPT: "echo ok" };
    expect((await runCli(["deploy"], { cwd: repo.clone, env })).code).toBe(0);
    const id = logFiles(repo.clone)[0]!.match(/_([0-9a-f-]{36})\.json$/)![1]!;
    const done = await runCli(["cancel", id], { cwd: repo.clone, env });
    expect(done.code).toBe(1);
    expect(done.stderr).toContain(`deploy ${id} already finished (ok)`);
    const unknown = await runCli(["cancel", "ffffffff"], { cwd: repo.clone, env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no deploy with id "ffffffff"');
    const junk = await runCli(["cancel", "../etc"], { cwd: repo.clone, env });
    expect(junk.code).toBe(1);
    expect(junk.stderr).toContain("is not a deploy id");
    for (const result of [done, unknown, junk]) expect(result.stderr).not.toContain("    at ");
    expect(existsSync(join(repo.clone, ".service", "cancel", `${id}.json`))).toBe(false);
  });
});
