/**
 * A failed health check names why: no attempt is started with too little time left to get an answer, and the
 * error keeps the last answer the app really gave.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { logFiles, makeRepo, readJson, runCli } from "../_support/helpers.ts";

/** The user's app: each request answered `status` after `delayMs`, or never once `hangAfter` requests were answered. */
function slowApp(status: number, delayMs: number, hangAfter = Number.POSITIVE_INFINITY) {
  let requests = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch() {
      if (++requests > hangAfter) await new Promise(() => {});
      await Bun.sleep(delayMs);
      return new Response("app", { status });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/up`, requests: () => requests, stop: () => server.stop(true) };
}

const apps: { stop: () => void }[] = [];
afterAll(() => {
  for (const app of apps) app.stop();
});

async function deploy(cwd: string, env: Record<string, string>) {
  const out = await runCli(["deploy"], { cwd, env: { SERVICE_RUN_SCRIPT: "true", ...env } });
  const json = logFiles(cwd).find((name) => name.endsWith(".json"))!;
  return { ...out, record: readJson(join(cwd, ".service", "logs", json)) };
}

describe('a failed health check names its reason (docs/deploy-control.md "Health check")', () => {
  test("attempts back to back until the timeout: the last one is not started without time to answer, the error says HTTP 500", async () => {
    const app = slowApp(500, 300);
    apps.push(app);
    const repo = makeRepo();
    const { code, record } = await deploy(repo.clone, {
      SERVICE_HEALTH_CHECK_URL: app.url,
      SERVICE_HEALTH_CHECK_TIMEOUT_MS: "1000",
      SERVICE_HEALTH_CHECK_INTERVAL_MS: "1",
    });
    expect(code).toBe(1);
    expect(record.result.error).toContain("last: HTTP 500");
    expect(record.result.error).not.toContain("no answer within");
  });

  test("an attempt cut by the timeout still names the last real answer", async () => {
    const app = slowApp(500, 0, 1);
    apps.push(app);
    const repo = makeRepo();
    const { code, record } = await deploy(repo.clone, {
      SERVICE_HEALTH_CHECK_URL: app.url,
      SERVICE_HEALTH_CHECK_TIMEOUT_MS: "2000",
      SERVICE_HEALTH_CHECK_INTERVAL_MS: "1",
    });
    expect(code).toBe(1);
    expect(record.result.error).toMatch(
      /last: no answer within \d+ ms \(cut at the timeout\); the last answer: HTTP 500/,
    );
  });
});
