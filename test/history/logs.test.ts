/**
 * Deploy log files (docs/log-files.md "Log files"): two files per deploy in `.service/logs/` of the working
 * directory, named `YYYY-MM-DD_HH-mm-ssZ_<uuid>.{json,log}` after the deploy's UTC start time.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import {
  lastLine,
  logFiles,
  makeLocalRepo,
  makeRepo,
  post,
  readJson,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
} from "../_support/helpers.ts";
import { startGated } from "../_support/gate.ts";

const LOG_NAME = /^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}Z_[0-9a-f-]{36}\.(json|log)$/;

/** The name stem the spec asks for, computed from the start time on its own (not with the code under test). */
function expectedStem(startedAt: string, id: string): string {
  const d = new Date(startedAt);
  const two = (n: number) => String(n).padStart(2, "0");
  const date = `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}`;
  const time = `${two(d.getUTCHours())}-${two(d.getUTCMinutes())}-${two(d.getUTCSeconds())}`;
  return `${date}_${time}Z_${id}`;
}

/**
 * Checks the two files of one deploy and returns the parsed JSON record and the .log text. A client is told their
 * paths in the working directory (`.service/logs/…`); the record on disk keeps them whole.
 */
function expectLogPair(cwd: string, result: { startedAt: string; log: { id: string; json: string; log: string } }) {
  const stem = expectedStem(result.startedAt, result.log.id);
  const dir = result.log.json.startsWith("/") ? join(cwd, ".service", "logs") : ".service/logs";
  expect(result.log.json).toBe(`${dir}/${stem}.json`);
  expect(result.log.log).toBe(`${dir}/${stem}.log`);
  const record = readJson(resolve(cwd, result.log.json));
  const transcript = readFileSync(resolve(cwd, result.log.log), "utf8");
  return { record, transcript };
}

describe('deploy log files (docs/log-files.md "Log files")', () => {
  test("a webhook deploy writes <UTC start>_<uuid>.json and .log in .service/logs of the working directory", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "echo from-the-script",
    });
    const result = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    const names = logFiles(repo.clone);
    expect(names).toHaveLength(2);
    for (const name of names) expect(name).toMatch(LOG_NAME);
    expect(names).toEqual([
      `${expectedStem(result.startedAt, result.log.id)}.json`,
      `${expectedStem(result.startedAt, result.log.id)}.log`,
    ]);
    expect(result.log.id).toBe(result.id);
    expectLogPair(repo.clone, result);
  });

  test("the .json file holds status done, the times, trigger, repoPath, runScript and the whole result", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "echo from-the-script",
    });
    const result = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    const { record } = expectLogPair(repo.clone, result);
    expect(record.status).toBe("done");
    expect(record.id).toBe(result.log.id);
    expect(record.trigger).toBe("webhook");
    expect(record.repoPath).toBe(repo.clone);
    expect(record.runScript).toBe("echo from-the-script");
    expect(record.startedAt).toBe(result.startedAt);
    expect(record.finishedAt).toBe(result.finishedAt);
    expect(record.durationMs).toBe(new Date(result.finishedAt).getTime() - new Date(result.startedAt).getTime());
    // The record keeps the files' whole paths; a client is told them in the working directory.
    expect({ ...record.result, log: result.log }).toEqual(result);
    expect(record.result.log).toEqual({
      id: result.log.id,
      json: join(repo.clone, result.log.json),
      log: join(repo.clone, result.log.log),
    });
  });

  test("the .log file holds the transcript the client saw, from the [deploy] line to the [done] line", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "sh -c 'echo out; echo err >&2; exit 3'",
    });
    const streamed = await (await post(server.url, { secret: SECRET })).text();
    const [json] = logFiles(repo.clone).filter((name) => name.endsWith(".json"));
    const record = readJson(join(repo.clone, ".service", "logs", json!));
    const transcript = readFileSync(record.result.log.log, "utf8");
    expect(transcript).toStartWith(`[deploy] ${record.id} `);
    expect(transcript).toContain("out\n");
    expect(transcript).toContain("err\n");
    expect(transcript).toEndWith("[done] ok=false exitCode=3\n");
    expect(streamed).toContain(transcript);
    expect(record.result.ok).toBe(false);
  });

  test("a deploy started by the deploy subcommand writes the same two files, with trigger cli", async () => {
    const repo = makeRepo();
    const run = await runCli(["deploy"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: "echo via-cli" } });
    expect(run.code).toBe(0);
    const names = logFiles(repo.clone);
    expect(names).toHaveLength(2);
    for (const name of names) expect(name).toMatch(LOG_NAME);
    const record = readJson(join(repo.clone, ".service", "logs", names.find((name) => name.endsWith(".json"))!));
    const { transcript } = expectLogPair(repo.clone, record.result);
    expect(record.status).toBe("done");
    expect(record.trigger).toBe("cli");
    expect(record.repoPath).toBe(repo.clone);
    expect(record.runScript).toBe("echo via-cli");
    expect(record.startedAt).toBe(record.result.startedAt);
    expect(record.result.ok).toBe(true);
    expect(record.result.run.stdout).toBe("via-cli\n");
    expect(transcript).toContain("via-cli\n");
    expect(lastLine(transcript)).toBe("[done] ok=true exitCode=0");
    expect(lastLine(run.stdout)).toBe("[done] ok=true exitCode=0");
  });

  test("a rejected request (401 or 404) writes no log files", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_PATH: "/hook",
      SERVICE_RUN_SCRIPT: "echo ran",
    });
    const rejected = [
      await post(`${server.url}/hook`, {}),
      await post(`${server.url}/hook`, { secret: "wrong" }),
      await post(`${server.url}/hook?format=json`, { headers: { authorization: "Bearer wrong" } }),
      await post(`${server.url}/other`, { secret: SECRET }),
      await fetch(`${server.url}/hook`, { headers: { "x-service-secret": SECRET } }),
    ];
    expect(rejected.map((res) => res.status)).toEqual([401, 401, 401, 404, 404]);
    for (const res of rejected) await res.text();
    expect(logFiles(repo.clone)).toEqual([]);
  });

  test("listings sort by time: a later deploy's files sort after an earlier one's", async () => {
    const repo = makeRepo();
    // Each deploy lasts over a second, so the second one starts in a later second than the first.
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "sleep 1.1" });
    const first = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    const second = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(new Date(second.startedAt).getTime()).toBeGreaterThan(new Date(first.startedAt).getTime());
    expect(logFiles(repo.clone)).toEqual(
      [first, first, second, second].map((r, i) => basename(i % 2 ? r.log.log : r.log.json)),
    );
  });

  test("a deploy whose log directory cannot be created still runs, says so once in its stream, and ends it with [done]", async () => {
    const repo = makeRepo();
    // A file where the .service directory should be: the log directory cannot be created.
    writeFileSync(join(repo.clone, ".service"), "not a directory\n");
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "touch ran.marker",
    });
    const streamed = await (await post(server.url, { secret: SECRET })).text();
    expect(lastLine(streamed)).toBe("[done] ok=true exitCode=0");
    // The client learns it too, once, after the deploy's first line.
    const lines = streamed.split("\n");
    expect(lines[0]).toStartWith("[deploy] ");
    expect(lines.filter((line) => line.startsWith("[log] "))).toEqual([
      expect.stringContaining("cannot create the deploy log"),
    ]);
    const res = await post(`${server.url}/?format=json`, { secret: SECRET });
    expect(res.status).toBe(200);
    expect((await res.json()).ok).toBe(true);
    expect(readFileSync(join(repo.clone, "ran.marker"), "utf8")).toBe("");
    // The operator learns why there is no log, on the service's own output.
    await waitFor(
      () => `${server.stdout.text}${server.stderr.text}`.includes("cannot create the deploy log"),
      "the log warning",
    );
  }, 20_000);
});

describe("service logs says what it found", () => {
  test('--failed when every deploy succeeded says "no failed deploys", not "no deploys yet"', async () => {
    const repo = makeLocalRepo();
    expect((await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "echo fine" } })).code).toBe(0);
    const listed = await runCli(["logs", "--failed"], { cwd: repo });
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim()).toBe("no failed deploys");
  });

  test("in a directory without .service/logs it names the directory it looked in and how to point elsewhere (--cwd)", async () => {
    const cwd = tempDir();
    const listed = await runCli(["logs"], { cwd });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(join(cwd, ".service", "logs"));
    expect(listed.stdout).toContain("--cwd DIR");
    expect(listed.stdout).not.toContain("no deploys yet");
    expect(listed.stdout.trim().split("\n")).toHaveLength(1);
  });

  test("logs <id> of an acknowledged deploy still in the queue shows it as waiting, then its log once it has run", async () => {
    await using gated = await startGated();
    const { repo, gate, server } = gated;
    const first = await (await post(`${server.url}/?ack=1&format=json`, { secret: SECRET })).json();
    await waitFor(() => gate.starts().includes(first.id), "the first deploy to hold the queue");
    const second = await (await post(`${server.url}/?ack=1&format=json`, { secret: SECRET })).json();
    expect(second.position).toBe(1);
    const id: string = second.id;
    for (const ref of [id, id.slice(0, 8)]) {
      const shown = await runCli(["logs", ref], { cwd: repo.clone });
      expect({ ref, code: shown.code, stderr: shown.stderr }).toEqual({ ref, code: 0, stderr: "" });
      expect(shown.stdout).toContain(`deploy ${id} is queued`);
      expect(shown.stdout).toContain(`service logs ${id.slice(0, 8)} --follow`);
    }
    const asJson = await runCli(["logs", id, "--json"], { cwd: repo.clone });
    expect(JSON.parse(asJson.stdout)).toMatchObject({ id, status: "queued", trigger: "webhook" });

    gate.open();
    await waitFor(async () => {
      const json = logFiles(repo.clone).find((name) => name.includes(id) && name.endsWith(".json"));
      return json && readJson(join(repo.clone, ".service", "logs", json)).status === "done";
    }, "the queued deploy to run and finish");
    const after = await runCli(["logs", id], { cwd: repo.clone });
    expect(after.code).toBe(0);
    expect(after.stdout).toContain(`[deploy] ${id} started`);
    expect(lastLine(after.stdout)).toBe("[done] ok=true exitCode=0");
  }, 30_000);

  test("a queued deploy whose service was killed is said not to have started and to be replayed at the next start, not waited for", async () => {
    await using gated = await startGated();
    const { repo, gate, server } = gated;
    const first = await (await post(`${server.url}/?ack=1&format=json`, { secret: SECRET })).json();
    await waitFor(() => gate.starts().includes(first.id), "the first deploy to hold the queue");
    const second = await (await post(`${server.url}/?ack=1&format=json`, { secret: SECRET })).json();
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    const shown = await runCli(["logs", second.id], { cwd: repo.clone });
    expect(shown.code).toBe(1);
    expect(shown.stdout).toBe("");
    expect(shown.stderr).toContain(`deploy ${second.id} has not started`);
    expect(shown.stderr).toContain("the next start of the service replays it (trigger recovered)");
    expect(shown.stderr).toContain(`pid ${server.proc.pid}`);
    expect(shown.stderr).not.toContain("is queued");
    // --follow does not wait for it either.
    const followed = await runCli(["logs", second.id, "--follow"], { cwd: repo.clone, timeoutMs: 15_000 });
    expect(followed.code).toBe(1);
    expect(followed.stderr).toContain(`deploy ${second.id} has not started`);
  }, 30_000);
});
