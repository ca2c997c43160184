import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { consola, LogLevels } from "consola";
import { createServiceServer, loadConfig, type StopOptions } from "../src/index.ts";
import {
  lastLine,
  logFiles,
  makeRepo,
  post,
  readJson,
  SECRET,
  startServer,
  waitFor,
  defer,
} from "./_support/helpers.ts";
import { startLibraryServer } from "./_support/library.ts";
import { fakeApi } from "./_support/outbound-fixtures.ts";

describe('HTTP endpoint (docs/http.md "HTTP")', () => {
  test("the start banner lists the listening URL, the repository, the run command and Auth: required", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo hello" });
    const lines = server.stdout.text.split("\n");
    expect(lines).toContain(`listening on http://localhost:${server.port}`);
    expect(lines.some((l) => l.includes(repo.clone))).toBe(true);
    expect(lines.some((l) => l.includes("echo hello"))).toBe(true);
    expect(lines).toContain("Auth: required");
  });

  test("wrong method and wrong path answer 404 and start no deploy", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_PATH: "/hooks/deploy",
      SERVICE_RUN_SCRIPT: "echo ran",
    });
    for (const method of ["GET", "PUT", "DELETE", "PATCH"]) {
      const res = await fetch(`${server.url}/hooks/deploy`, { method, headers: { "x-service-secret": SECRET } });
      expect(res.status).toBe(404);
      await res.text();
    }
    for (const path of ["/", "/hooks", "/hooks/deploy/", "/hooks/deploy/x"]) {
      const res = await post(`${server.url}${path}`, { secret: SECRET });
      expect(res.status).toBe(404);
      expect((await res.json()).error).toBe("not found");
    }
    expect(logFiles(repo.clone)).toEqual([]);
    const ok = await post(`${server.url}/hooks/deploy`, { secret: SECRET });
    expect(ok.status).toBe(200);
    expect(lastLine(await ok.text())).toBe("[done] ok=true exitCode=0");
  });

  test("missing or wrong secret answers 401 with JSON and runs nothing", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "touch ran.txt" });
    const cases: Record<string, string>[] = [
      {},
      { "x-service-secret": "wrong" },
      { "x-service-secret": "" },
      { authorization: `Bearer wrong` },
      { authorization: `Bearer` },
      { authorization: SECRET },
      { "x-service-secret": `${SECRET}x` },
      { "x-service-secret": SECRET, authorization: "Bearer wrong" },
    ];
    for (const headers of cases) {
      const res = await post(server.url, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect((await res.json()).error).toBe("unauthorized");
    }
    expect(logFiles(repo.clone)).toEqual([]);
    expect(await Bun.file(join(repo.clone, "ran.txt")).exists()).toBe(false);
  });

  test("an authorized POST streams text/plain live: pull output, then run output, then the [done] line", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "echo from-the-script",
    });
    const commit = repo.push({ "new.txt": "v2\n" }, "second");
    const res = await post(server.url, {
      secret: SECRET,
      body: '{"ref":"refs/heads/main"}',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/plain");
    expect(res.headers.get("x-accel-buffering")).toBe("no");
    const text = await res.text();
    expect(text.indexOf("git pull")).toBeGreaterThanOrEqual(0);
    expect(text.indexOf("from-the-script")).toBeGreaterThan(text.indexOf("git pull"));
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(repo.head()).toBe(commit);
  });

  test("Authorization: Bearer <secret> is accepted like X-Service-Secret", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "true" });
    const res = await post(server.url, { headers: { authorization: `Bearer ${SECRET}` } });
    expect(res.status).toBe(200);
    expect(lastLine(await res.text())).toBe("[done] ok=true exitCode=0");
  });

  test("?format=json returns the buffered deploy result with every field of the spec", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "sh -c 'echo out; echo err >&2'",
    });
    const res = await post(`${server.url}/?format=json`, { secret: SECRET });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const result = await res.json();
    expect(result.ok).toBe(true);
    expect(result.pull.success).toBe(true);
    expect(typeof result.pull.stdout).toBe("string");
    expect(typeof result.pull.stderr).toBe("string");
    expect(result.run.stdout).toBe("out\n");
    expect(result.run.stderr).toBe("err\n");
    expect(result.run.exitCode).toBe(0);
    expect(result.error).toBeNull();
    expect(result.rollback).toBeUndefined();
    expect(result.log.id).toMatch(/^[0-9a-f-]{36}$/);
    // The log files by their paths in the service's working directory: no directory of the server goes to a client.
    expect(result.log.json).toMatch(new RegExp(`^\\.service/logs/[0-9-]{10}_[0-9-]{8}Z_${result.log.id}\\.json$`));
    expect(result.log.log).toBe(result.log.json.replace(/\.json$/, ".log"));
    expect(JSON.stringify(result)).not.toContain(repo.clone);
    const json = readJson(join(repo.clone, result.log.json));
    expect(json.result.ok).toBe(true);
    expect(readFileSync(join(repo.clone, result.log.log), "utf8")).toContain("[done] ok=true exitCode=0");
  });

  test("a run script that exits non-zero still answers 200; the outcome is in the last line", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "sh -c 'exit 7'",
    });
    const res = await post(server.url, { secret: SECRET });
    expect(res.status).toBe(200);
    expect(lastLine(await res.text())).toBe("[done] ok=false exitCode=7");
    const json = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(json.ok).toBe(false);
    expect(json.run.exitCode).toBe(7);
  });
});

/** The pids of processes whose command line is exactly `argv`. */
function processesRunning(argv: string[]): number[] {
  const wanted = `${argv.join("\0")}\0`;
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8") === wanted) found.push(Number(name));
    } catch {}
  }
  return found;
}

describe("Library (README: Library)", () => {
  test("stop({ force: true }) stops the running deploy's process tree; the deploy ends ok=false with complete logs", async () => {
    const repo = makeRepo();
    // Two sleeps: the script's own and a background child in the same tree, both named by a unique duration.
    const seconds = String(3000 + Math.floor(Math.random() * 5000));
    const config = loadConfig({
      cwd: repo.clone,
      env: {
        SERVICE_PORT: "0",
        SERVICE_SECRET: SECRET,
        SERVICE_RUN_SCRIPT: `sh -c 'sleep ${seconds} & sleep ${seconds}; wait'`,
      },
    });
    await using server = await startLibraryServer(
      config,
      { cwd: repo.clone, logger: consola.create({ level: LogLevels.silent }) },
      { force: true },
    );
    const response = post(`${server.url}/?format=json`, { secret: SECRET });
    await waitFor(() => processesRunning(["sleep", seconds]).length === 2, "both sleeps of the deploy");
    await server.stop({ force: true });
    expect(server.listening).toBe(false);
    expect(processesRunning(["sleep", seconds])).toEqual([]);
    const result = await (await response).json();
    expect(result.ok).toBe(false);
    expect(readJson(join(repo.clone, result.log.json)).result.ok).toBe(false);
    expect(lastLine(readFileSync(join(repo.clone, result.log.log), "utf8"))).toStartWith("[done] ok=false");
  });

  test("stop({ force: true }) stops only the deploys of its own server, not another server's in the same process", async () => {
    const seconds = [0, 1].map((i) => String(3000 + i * 5000 + Math.floor(Math.random() * 5000)));
    const servers = seconds.map((duration) => {
      const repo = makeRepo();
      const config = loadConfig({
        cwd: repo.clone,
        env: { SERVICE_PORT: "0", SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: `sleep ${duration}` },
      });
      return createServiceServer(config, { cwd: repo.clone, logger: consola.create({ level: LogLevels.silent }) });
    });
    await using stopped = new AsyncDisposableStack();
    for (const server of servers) stopped.defer(() => server.stop({ force: true }));
    const responses: Promise<Response>[] = [];
    for (const server of servers) {
      await server.start();
      responses.push(post(`${server.url}/?format=json`, { secret: SECRET }));
    }
    for (const duration of seconds)
      await waitFor(() => processesRunning(["sleep", duration]).length === 1, `the sleep ${duration} deploy`);
    await servers[0]!.stop({ force: true });
    expect(processesRunning(["sleep", seconds[0]!])).toEqual([]);
    expect(processesRunning(["sleep", seconds[1]!]).length).toBe(1);
    expect(servers[1]!.listening).toBe(true);
    await servers[1]!.stop({ force: true });
    expect(processesRunning(["sleep", seconds[1]!])).toEqual([]);
    for (const response of responses) expect((await (await response).json()).ok).toBe(false);
  });
});

describe("two library servers in one process", () => {
  test("stopping one leaves the other's notifications in flight alone: they are delivered and recorded as sent", async () => {
    const api = fakeApi(["hang"]);
    const quiet = consola.create({ level: LogLevels.silent });
    const start = (repoPath: string, stop: StopOptions = {}) =>
      startLibraryServer(
        {
          ...loadConfig({ cwd: repoPath, env: {} }),
          port: 0,
          hostname: "127.0.0.1",
          secret: SECRET,
          runScript: "echo deployed",
          notify: [{ url: `${api.url}/hook`, on: ["succeeded"] }],
        },
        { cwd: repoPath, logger: quiet },
        stop,
      );
    await using a = await start(makeRepo().clone, { force: true });
    const bRepo = makeRepo().clone;
    await using b = await start(bRepo);
    using _released = defer(() => api.release());
    const res = await post(`${b.url}/?format=json`, { secret: SECRET });
    const result = await res.json();
    expect(result.ok).toBe(true);
    await waitFor(() => api.held() === 1, "b's notification at the receiver");
    // A forced stop gives its own calls no grace: it must not abort b's.
    await a.stop({ force: true });
    api.release();
    const sent = await waitFor(() => readJson(join(bRepo, result.log.json)).outbound?.[0], "b's notification recorded");
    expect(sent).toMatchObject({ kind: "notify", ok: true, what: "succeeded" });
  });
});
