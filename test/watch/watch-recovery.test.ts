/**
 * docs/watch.md: a watch is never resumed. A deploy found watching at start, its process killed, went live and was
 * healthy: it is recorded ok with its watch interrupted, and what it deployed is the live commit.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { consola, LogLevels } from "consola";
import { loadConfig } from "../../src/config/load.ts";
import { StreamReader } from "../_support/gate.ts";
import { startLibraryServer } from "../_support/library.ts";
import {
  logFiles,
  makeRepo,
  post,
  readJson,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
} from "../_support/helpers.ts";

describe("watch: a crash during the watch (docs/watch.md)", () => {
  test("found watching at the next start: recorded ok with watch.interrupted, the watched commit live", async () => {
    const repo = makeRepo();
    const service = tempDir("service-watch-crash-");
    const config = join(service, "service.yaml");
    writeFileSync(config, "watch:\n  forMs: 120000\n  intervalMs: 200\n  command: 'true'\n");
    const env = {
      SERVICE_CONFIG: config,
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "true",
      SERVICE_REPO_PATH: repo.clone,
    };
    const pushed = repo.push({ "v2.txt": "2\n" });
    const server = await startServer(service, env);
    const stream = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => /\[watch\] [\d.]+ of 2 min: exit 0/.test(stream.text), "the first check");
    const id = stream.id()!;
    const json = join(service, ".service", "logs", logFiles(service).find((f) => f.endsWith(`_${id}.json`))!);
    await waitFor(() => readJson(json).watching?.checks >= 1, "the running record to say it watches");
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    await using _restarted = await startServer(service, env);
    const record = await waitFor(() => {
      const read = readJson(json);
      return read.status !== "running" ? read : undefined;
    }, "the record to be recovered");
    expect(record.status).toBe("done");
    expect(record.result).toMatchObject({
      ok: true,
      rolledBack: false,
      commit: { sha: pushed },
      watch: { command: "true", value: 0, threshold: 0, interrupted: true },
    });
    expect(readFileSync(json.replace(/\.json$/, ".log"), "utf8")).toEndWith(
      "[watch] not finished: the service stopped during the watch; what is live stays\n[done] ok=true exitCode=0\n",
    );
    const status = JSON.parse((await runCli(["status", "--json"], { cwd: service, env })).stdout);
    expect(status[0]).toMatchObject({ commit: pushed, watching: null });
  });

  test("a library server started again after a stop watches to the end again", async () => {
    const repo = makeRepo();
    const config = {
      ...loadConfig({ cwd: repo.clone, env: {} }),
      port: 0,
      hostname: "127.0.0.1",
      secret: SECRET,
      runScript: "true",
      watch: { forMs: 300, intervalMs: 100, command: "true" },
    };
    await using server = await startLibraryServer(config, {
      cwd: repo.clone,
      logger: consola.create({ level: LogLevels.silent }),
    });
    await server.stop();
    await server.start();
    repo.push({ "v2.txt": "2\n" });
    const result = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(result).toMatchObject({ ok: true, watch: { command: "true", value: 0 } });
    expect(result.watch.interrupted).toBeUndefined();
    expect(result.watch.checks).toBeGreaterThanOrEqual(2);
  });
});
