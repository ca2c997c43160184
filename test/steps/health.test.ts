import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load.ts";
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
  tempDir,
  waitFor,
  defer,
} from "../_support/helpers.ts";
import { pushWithout } from "../_support/push-without.ts";
import { writeFileSync } from "node:fs";

/** The user's app as the health check sees it: answers `statuses` in turn, then the last one forever. */
function fakeApp(statuses: number[]) {
  let requests = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => new Response("app", { status: statuses[Math.min(requests++, statuses.length - 1)] }),
  });
  return { url: `http://127.0.0.1:${server.port}/up`, requests: () => requests, stop: () => server.stop(true) };
}

const apps: { stop: () => void }[] = [];
afterAll(() => {
  for (const app of apps) app.stop();
});

/** `service deploy` in the clone, and the record of the deploy it made. */
async function deploy(cwd: string, env: Record<string, string>) {
  const before = new Set(logFiles(cwd));
  const out = await runCli(["deploy"], { cwd, env: { SERVICE_RUN_SCRIPT: "true", ...env } });
  const json = logFiles(cwd).find((name) => name.endsWith(".json") && !before.has(name))!;
  return { ...out, record: readJson(join(cwd, ".service", "logs", json)) };
}

describe("health check", () => {
  test("healthCheckUrl: retried until the URL answers 2xx; the deploy is ok and its result says how many attempts", async () => {
    const app = fakeApp([503, 503, 200]);
    apps.push(app);
    const repo = makeRepo();
    const { code, stdout, record } = await deploy(repo.clone, {
      SERVICE_HEALTH_CHECK_URL: app.url,
      SERVICE_HEALTH_CHECK_INTERVAL_MS: "50",
    });
    expect(code).toBe(0);
    expect(stdout).toContain("[health] attempt 1: unhealthy (HTTP 503)");
    expect(stdout).toContain("[health] healthy after 3 attempts");
    expect(lastLine(stdout)).toBe("[done] ok=true exitCode=0");
    expect(record.result.healthCheck).toMatchObject({ ok: true, attempts: 3, error: null });
    expect(typeof record.result.healthCheck.durationMs).toBe("number");
  });

  test("an unhealthy URL fails the deploy: ok=false, the error names the status code and the timeout", async () => {
    const app = fakeApp([500]);
    apps.push(app);
    const repo = makeRepo();
    const env = {
      SERVICE_HEALTH_CHECK_URL: app.url,
      SERVICE_HEALTH_CHECK_INTERVAL_MS: "50",
      SERVICE_HEALTH_CHECK_TIMEOUT_MS: "600",
    };
    const { code, stdout, record } = await deploy(repo.clone, env);
    expect(code).toBe(1);
    expect(record.result.ok).toBe(false);
    expect(record.result.error).toContain("health check failed");
    expect(record.result.error).toContain("HTTP 500");
    expect(record.result.error).toContain("600 ms (healthCheckTimeoutMs)");
    expect(record.result.healthCheck.ok).toBe(false);
    // Not every attempt: the first, then the end.
    const attempts = record.result.healthCheck.attempts;
    expect(attempts).toBeGreaterThan(2);
    expect(stdout.split("\n").filter((line) => line.startsWith("[health]")).length).toBeLessThan(attempts + 2);
    expect(stdout).toContain("[health] failed after");
    expect(app.requests()).toBe(attempts);
  });

  test("healthCheck: a command run in repoPath with the deploy's environment; its exit code is the reason", async () => {
    const repo = makeRepo();
    const healthy = await deploy(repo.clone, {
      SERVICE_RUN_SCRIPT: "touch up",
      SERVICE_HEALTH_CHECK: "sh -c 'test -f up && test -n \"$SERVICE_DEPLOY_ID\"'",
    });
    expect(healthy.code).toBe(0);
    expect(healthy.record.result.healthCheck).toMatchObject({ ok: true, attempts: 1 });
    const failing = await deploy(repo.clone, {
      SERVICE_HEALTH_CHECK: "sh -c 'exit 7'",
      SERVICE_HEALTH_CHECK_TIMEOUT_MS: "300",
      SERVICE_HEALTH_CHECK_INTERVAL_MS: "100",
    });
    expect(failing.code).toBe(1);
    expect(failing.record.result.error).toContain("exit code 7");
    expect(failing.stdout).toContain("[health] attempt 1: unhealthy (exit code 7)");
  });

  test("no health check keys: no check and no healthCheck in the result (the behaviour before the keys existed)", async () => {
    const repo = makeRepo();
    const { code, stdout, record } = await deploy(repo.clone, {});
    expect(code).toBe(0);
    expect(stdout).not.toContain("[health]");
    expect(record.result.healthCheck).toBeUndefined();
  });

  test("a failing run script is not health-checked", async () => {
    const app = fakeApp([200]);
    apps.push(app);
    const repo = makeRepo();
    const { code, record } = await deploy(repo.clone, {
      SERVICE_RUN_SCRIPT: "false",
      SERVICE_HEALTH_CHECK_URL: app.url,
    });
    expect(code).toBe(1);
    expect(record.result.healthCheck).toBeUndefined();
    expect(app.requests()).toBe(0);
  });

  test("with rollbackOnFailure an unhealthy deploy rolls back, and the rollback's redeploy is health-checked too (JSON result)", async () => {
    const repo = makeRepo({ healthy: "yes\n" });
    const good = repo.head();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "true",
      SERVICE_ROLLBACK_ON_FAILURE: "true",
      SERVICE_HEALTH_CHECK: "test -f healthy",
      SERVICE_HEALTH_CHECK_TIMEOUT_MS: "300",
      SERVICE_HEALTH_CHECK_INTERVAL_MS: "100",
    });
    const broken = pushWithout(repo, "healthy");
    const result = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(result.healthCheck.ok).toBe(false);
    expect(result.error).toContain("health check failed");
    expect(result.rollback).toMatchObject({ to: good, from: broken, ok: true });
    expect(result.rollback.healthCheck).toMatchObject({ ok: true, attempts: 1 });
    expect(result.ok).toBe(true);
    expect(result.rolledBack).toBe(true);
    expect(repo.head()).toBe(good);
  });

  test("Ctrl-C during the health check ends it at once (not at its timeout): the deploy fails and its logs complete", async () => {
    const app = fakeApp([503]);
    apps.push(app);
    const repo = makeRepo();
    const env = baseEnv({
      SERVICE_RUN_SCRIPT: "true",
      SERVICE_HEALTH_CHECK_URL: app.url,
      SERVICE_HEALTH_CHECK_TIMEOUT_MS: "600000",
      SERVICE_HEALTH_CHECK_INTERVAL_MS: "100",
    });
    const proc = Bun.spawn([...CLI, "deploy"], { cwd: repo.clone, env, stdout: "pipe", stderr: "ignore" });
    let stdout = "";
    const reading = (async () => {
      for await (const chunk of proc.stdout) stdout += new TextDecoder().decode(chunk);
    })();
    using _killed = defer(() => proc.kill("SIGKILL"));
    await waitFor(() => stdout.includes("[health] attempt 1"), "the first health check attempt");
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(1);
    await reading;
    expect(stdout).toContain("[health] failed after");
    expect(lastLine(stdout)).toBe("[done] ok=false exitCode=0");
    const json = logFiles(repo.clone).find((name) => name.endsWith(".json"))!;
    const record = readJson(join(repo.clone, ".service", "logs", json));
    expect(record.status).toBe("done");
    expect(record.result.error).toContain("health check failed: stopped");
  });

  test("a healthCheckUrl that is not an http(s) URL is refused like any wrong value, naming the key", () => {
    for (const url of ["localhost:8080/up", "ftp://127.0.0.1/up", "not a url"]) {
      expect(() => loadConfig({ cwd: tempDir(), env: { SERVICE_HEALTH_CHECK_URL: url } })).toThrow(
        "SERVICE_HEALTH_CHECK_URL: expected an http:// or https:// URL",
      );
    }
  });

  test("the keys are accepted at the top level and per apps entry, from the file and the environment", () => {
    const cwd = tempDir();
    writeFileSync(
      join(cwd, "service.yaml"),
      "health_check_url: http://127.0.0.1:1/up\napps:\n  - name: web\n    host: a.example\n    path: /\n    repoPath: /srv/a\n    runScript: x\n    healthCheck: test -f up\n    healthCheckTimeoutMs: 5000\n",
    );
    const config = loadConfig({ cwd, env: { SERVICE_HEALTH_CHECK_INTERVAL_MS: "250" } });
    expect(config.healthCheckUrl).toBe("http://127.0.0.1:1/up");
    expect(config.healthCheckIntervalMs).toBe(250);
    expect(config.apps[0]).toMatchObject({ healthCheck: "test -f up", healthCheckTimeoutMs: 5000 });
  });
});

describe("health check and the longest deploy", () => {
  test("deployLimitSeconds counts the health check after each run of the script (systemd's stop timeout, the proxy's)", async () => {
    const { deployLimitSeconds } = await import("../../src/ops/deploy-limit.ts");
    const app = { runTimeoutMs: 60_000, rollbackOnFailure: false };
    expect(deployLimitSeconds([{ ...app, healthCheckUrl: "http://127.0.0.1:1/", healthCheckTimeoutMs: 30_000 }])).toBe(
      deployLimitSeconds([app]) + 40,
    );
    expect(
      deployLimitSeconds([{ ...app, rollbackOnFailure: true, healthCheck: "true", healthCheckTimeoutMs: 30_000 }]),
    ).toBe(deployLimitSeconds([{ ...app, rollbackOnFailure: true }]) + 80);
  });
});
