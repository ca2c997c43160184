import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeGate, serialized, StreamReader, startGated } from "../_support/gate.ts";
import {
  baseEnv,
  CLI,
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
import { scanTickets } from "../../src/queue/tickets.ts";

/** A server killed with SIGKILL while its deploy ran (the deploy's gate is open again for the next one). */
async function killedMidDeploy() {
  const { repo, gate, env, server: first } = await startGated();
  const reader = new StreamReader(await post(first.url, { secret: SECRET }));
  await waitFor(() => gate.lines().length === 1, "the deploy to start");
  first.proc.kill("SIGKILL");
  await first.proc.exited;
  await reader.done;
  gate.open();
  return { repo, env, id: reader.id()!, reader, first };
}

describe('queue (docs/deploy-control.md "Queue": one deploy at a time per repoPath, FIFO)', () => {
  test("deploys of the same repoPath run one at a time in arrival order; waiting ones stream [queued] waiting; position=N", async () => {
    await using gated = await startGated();
    const { gate, server } = gated;
    const readers: StreamReader[] = [];
    for (let i = 0; i < 4; i++) {
      const reader = new StreamReader(await post(server.url, { secret: SECRET }));
      // Arrival order is fixed by waiting for each request's first line before sending the next.
      await waitFor(() => reader.text.includes("\n"), `request ${i} answered`);
      readers.push(reader);
    }
    expect(readers[0]!.text).not.toContain("[queued]");
    expect(readers[1]!.text.split("\n")[0]).toBe("[queued] waiting; position=1");
    expect(readers[2]!.text.split("\n")[0]).toBe("[queued] waiting; position=2");
    expect(readers[3]!.text.split("\n")[0]).toBe("[queued] waiting; position=3");
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    gate.open();
    const bodies = await Promise.all(readers.map((r) => r.done));
    for (const body of bodies) expect(lastLine(body)).toBe("[done] ok=true exitCode=0");
    expect(gate.starts()).toEqual(readers.map((r) => r.id()!));
    expect(serialized(gate.lines())).toBe(true);
  });

  test("a `deploy` started in a shell while the server deploys waits its turn, and the server waits for it (across processes)", async () => {
    await using gated = await startGated();
    const { repo, gate, env, server } = gated;
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the webhook deploy to start");
    await using cli = spawnDeploy(repo.clone, env);
    await waitFor(() => cli.out.text.includes("[queued]"), "the CLI deploy to queue");
    expect(cli.out.text.split("\n")[0]).toBe("[queued] waiting; position=1");
    const third = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => third.text.includes("\n"), "the second webhook request to answer");
    expect(third.text.split("\n")[0]).toBe("[queued] waiting; position=2");
    gate.open();
    expect(await cli.proc.exited).toBe(0);
    await Promise.all([first.done, third.done]);
    expect(gate.starts()).toEqual([first.id()!, cli.out.id()!, third.id()!]);
    expect(
      gate
        .lines()
        .filter((l) => l.startsWith("start"))
        .map((l) => l.split(" ")[2]),
    ).toEqual(["webhook", "cli", "webhook"]);
    expect(serialized(gate.lines())).toBe(true);
  });

  test("the pull runs when the entry's turn arrives, so commits pushed during an earlier deploy are picked up", async () => {
    await using gated = await startGated();
    const { repo, gate, server } = gated;
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    const second = post(`${server.url}/?format=json`, { secret: SECRET });
    await waitFor(() => first.text.length > 0, "first output");
    const pushed = repo.push({ "later.txt": "pushed while deploying\n" }, "pushed during the first deploy");
    gate.open();
    await first.done;
    const result = await (await second).json();
    expect(result.ok).toBe(true);
    expect(result.pull.after).toBe(pushed);
    expect(repo.head()).toBe(pushed);
  });

  test("deploys of different repoPaths run independently", async () => {
    await using gated = await startGated();
    const { gate, server } = gated;
    const other = makeRepo();
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the blocked repository's deploy to start");
    await using cli = spawnDeploy(other.clone, { SERVICE_RUN_SCRIPT: "echo other-repo-deployed" });
    expect(await cli.proc.exited).toBe(0);
    expect(cli.out.text).toContain("other-repo-deployed");
    expect(cli.out.text).not.toContain("[queued]");
    expect(gate.lines()).toHaveLength(1); // the first deploy is still running
    gate.open();
    expect(lastLine(await first.done)).toBe("[done] ok=true exitCode=0");
  });

  test("the ticket of a holder killed with kill -9 is taken over: the repository never stays locked", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: gate.script, ...gate.env };
    await using cli = spawnDeploy(repo.clone, env);
    await waitFor(() => gate.lines().length === 1, "the CLI deploy to start");
    const ticketDir = join(repo.clone, ".git", "service-deploy-queue");
    expect(readdirSync(ticketDir)).toHaveLength(1);
    cli.proc.kill("SIGKILL");
    await cli.proc.exited;
    gate.open();
    await using server = await startServer(repo.clone, env);
    const res = await post(server.url, { secret: SECRET });
    const text = await res.text();
    expect(text).not.toContain("[queued]");
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    // The dead holder's seat is removed; the server keeps its own seat, empty, for its next ticket.
    const dead = `seat-${cli.proc.pid}-`;
    await waitFor(
      () => scanTickets(ticketDir).live.length === 0 && !readdirSync(ticketDir).some((n) => n.startsWith(dead)),
      "the tickets to be gone",
    );
  });

  test("past queueLimit a POST gets 429 with a JSON body and Retry-After, and nothing runs", async () => {
    await using gated = await startGated({ SERVICE_QUEUE_LIMIT: "1" });
    const { repo, gate, server } = gated;
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    const second = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => second.text.includes("[queued]"), "the second to queue");
    const refused = await post(server.url, { secret: SECRET });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await refused.json()).error).toBe("queue full");
    gate.open();
    await Promise.all([first.done, second.done]);
    expect(gate.starts()).toHaveLength(2);
    expect(logFiles(repo.clone).filter((f) => f.endsWith(".json"))).toHaveLength(2);
  });
});

describe("a queue that cannot be joined", () => {
  test("its ticket directory cannot be made: nothing runs, and the stream, the JSON result, the CLI and both logs say why", async () => {
    const repo = makeRepo();
    // What a service user without write access to .git meets, as root can meet it: a file where the directory goes.
    writeFileSync(join(repo.clone, ".git", "service-deploy-queue"), "");
    const marker = join(repo.clone, "ran.marker");
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: `touch ${marker}` };
    await using server = await startServer(repo.clone, env);
    const text = await (await post(server.url, { secret: SECRET })).text();
    expect(text).toContain("[deploy] not started: cannot join the deploy queue");
    expect(text).toContain("service-deploy-queue");
    expect(lastLine(text)).toBe("[done] ok=false exitCode=null");
    const result = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(result.ok).toBe(false);
    expect(result.error).toContain("cannot join the deploy queue");
    expect(readJson(join(repo.clone, result.log.json)).status).toBe("done");
    expect(lastLine(await Bun.file(join(repo.clone, result.log.log)).text())).toBe("[done] ok=false exitCode=null");
    await server.stop();
    const cli = await runCli(["deploy"], { cwd: repo.clone, env });
    expect(cli.code).toBe(1);
    expect(cli.stdout).toContain("cannot join the deploy queue");
    expect(existsSync(marker)).toBe(false);
    expect(logFiles(repo.clone)).toHaveLength(6);
  });
});

describe("shutdown and crashes", () => {
  test("SIGTERM: new POSTs get 503, queued requests end cancelled with [done] ok=false, the running deploy finishes, exit 0", async () => {
    await using gated = await startGated();
    const { repo, gate, server } = gated;
    const running = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    const queued = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => queued.text.includes("[queued]"), "the second to queue");
    server.proc.kill("SIGTERM");
    const cancelled = await queued.done;
    expect(cancelled).toContain("cancelled");
    expect(lastLine(cancelled)).toBe("[done] ok=false exitCode=null");
    const refused = await post(server.url, { secret: SECRET });
    expect(refused.status).toBe(503);
    expect((await refused.json()).error).toBe("shutting down");
    gate.open();
    expect(lastLine(await running.done)).toBe("[done] ok=true exitCode=0");
    expect(await server.proc.exited).toBe(0);
    const records = logFiles(repo.clone)
      .filter((f) => f.endsWith(".json"))
      .map((f) => readJson(join(repo.clone, ".service", "logs", f)));
    expect(records.map((r) => r.status).sort()).toEqual(["cancelled", "done"]);
  });

  test("a second signal kills the running script's process tree and exits", async () => {
    const repo = makeRepo();
    const marker = `marker-${crypto.randomUUID()}`;
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: `sh -c "sleep 300 # ${marker}" & sleep 300 # ${marker}`,
    });
    const running = new StreamReader(await post(server.url, { secret: SECRET }));
    const alive = () =>
      Bun.spawnSync(["ps", "-eo", "args"])
        .stdout.toString()
        .split("\n")
        .filter((l) => l.includes(marker) && !l.includes("ps -eo")).length;
    await waitFor(() => alive() >= 2, "the script and its child to run");
    server.proc.kill("SIGTERM");
    await waitFor(
      () => server.stdout.text.includes("SIGTERM") || server.stderr.text.includes("SIGTERM"),
      "the first signal to be handled",
    );
    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).not.toBe(0);
    await waitFor(() => alive() === 0, "every process of the deploy to be gone");
    expect(lastLine(await running.done)).toStartWith("[done] ok=false");
  });

  test("SIGHUP (the terminal that started the service closed) stops it like SIGTERM: the running deploy finishes with complete logs, exit 0", async () => {
    await using gated = await startGated();
    const { repo, gate, server } = gated;
    const running = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the deploy to start");
    server.proc.kill("SIGHUP");
    await waitFor(
      () => `${server.stdout.text}${server.stderr.text}`.includes("SIGHUP: accepting no new deploys"),
      "the server to start draining",
    );
    expect(server.proc.exitCode).toBeNull();
    gate.open();
    expect(lastLine(await running.done)).toBe("[done] ok=true exitCode=0");
    expect(await server.proc.exited).toBe(0);
    const [json, log] = logFiles(repo.clone).map((f) => join(repo.clone, ".service", "logs", f));
    expect(readJson(json!).status).toBe("done");
    expect(lastLine(await Bun.file(log!).text())).toBe("[done] ok=true exitCode=0");
  });

  test("started with nohup (SIGHUP ignored), a SIGHUP stops nothing: the deploy runs and the server keeps serving", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const proc = Bun.spawn(["nohup", ...CLI], {
      cwd: repo.clone,
      env: baseEnv({ SERVICE_PORT: "0", SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: gate.script, ...gate.env }),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    using _killed = defer(() => proc.kill("SIGKILL"));
    const out = new StreamReader(new Response(proc.stdout));
    const port = Number(
      (await waitFor(() => /listening on http:\/\/localhost:(\d+)\n/.exec(out.text), "the banner"))[1],
    );
    const url = `http://localhost:${port}`;
    const running = new StreamReader(await post(url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the deploy to start");
    proc.kill("SIGHUP");
    // A POST answered after the signal: were the server stopping, it would get 503.
    const queued = new StreamReader(await post(url, { secret: SECRET }));
    await waitFor(() => queued.text.includes("[queued]"), "the second deploy to queue");
    gate.open();
    expect(lastLine(await running.done)).toBe("[done] ok=true exitCode=0");
    expect(lastLine(await queued.done)).toBe("[done] ok=true exitCode=0");
    expect(proc.exitCode).toBeNull();
    expect(out.text).not.toContain("SIGHUP");
  });

  test("the server's output closed by its reader (`service 2>&1 | head -n 1`): warnings it can no longer print do not stop it, and its deploys complete", async () => {
    const repo = makeRepo();
    const proc = Bun.spawn(["sh", "-c", '"$@" 2>&1 | head -n 1', "sh", ...CLI], {
      cwd: repo.clone,
      env: baseEnv({ SERVICE_PORT: "0", SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed" }),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
    });
    // The shell, the service and head are one process group of their own.
    using _killed = defer(() => process.kill(-proc.pid, "SIGKILL"));
    // head prints the first line (the banner's) and exits: every later write of the service fails (EPIPE).
    const out = new StreamReader(new Response(proc.stdout));
    const port = Number(
      (await waitFor(() => /listening on http:\/\/localhost:(\d+)\n/.exec(out.text), "the banner's first line"))[1],
    );
    for (let i = 0; i < 3; i++) {
      // Each edit makes the service warn about the file (on its closed output) and keep the last good values.
      writeFileSync(join(repo.clone, "service.yaml"), `runScript: [half saved ${i}\n`);
      const res = await post(`http://localhost:${port}/?format=json`, { secret: SECRET });
      const result = await res.json();
      expect(result.ok).toBe(true);
      expect(result.run.stdout).toBe("deployed\n");
    }
    expect(logFiles(repo.clone)).toHaveLength(6);
  });

  test("kill -9 mid-deploy: the next start marks the deploy interrupted and the next deploy works", async () => {
    const { repo, env, id, reader } = await killedMidDeploy();
    expect(reader.error).toBeDefined();
    await using second = await startServer(repo.clone, env);
    const jsonFile = logFiles(repo.clone).find((f) => f.endsWith(`${id}.json`))!;
    expect(readJson(join(repo.clone, ".service", "logs", jsonFile)).status).toBe("interrupted");
    const res = await post(second.url, { secret: SECRET });
    expect(lastLine(await res.text())).toBe("[done] ok=true exitCode=0");
    expect(existsSync(join(repo.clone, ".git", "service-deploy-queue"))).toBe(true);
  });

  test("kill -9 mid-deploy, then its pid taken by another process: logs --follow still ends and the next start still marks the deploy interrupted", async () => {
    const { repo, env, id, first } = await killedMidDeploy();
    const jsonPath = join(repo.clone, ".service", "logs", logFiles(repo.clone).find((f) => f.endsWith(`${id}.json`))!);
    const record = readJson(jsonPath);
    expect(record.status).toBe("running");
    expect(record.pid).toBe(first.proc.pid);
    // Pids are reused (a service in a container is pid 1 on every start): a live process now has the record's pid.
    const other = Bun.spawn(["sleep", "60"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    using _otherKilled = defer(() => other.kill("SIGKILL"));
    writeFileSync(jsonPath, `${JSON.stringify({ ...record, pid: other.pid }, null, 2)}\n`);
    const followed = await runCli(["logs", "--follow", id], { cwd: repo.clone });
    expect(followed.code).not.toBe(0);
    expect(followed.stderr).toContain("will not finish");
    // The start is what marks it.
    await using _second = await startServer(repo.clone, env);
    expect(readJson(jsonPath).status).toBe("interrupted");
  });
});
