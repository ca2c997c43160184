/**
 * docs/watch.md: one reading of a watch's query against a real Prometheus (what a check sees: one number, or why
 * not), and `service check`'s run of it.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { queryPrometheus } from "../../src/watch/prometheus.ts";
import { makeRepo, runCli, tempDir } from "../_support/helpers.ts";
import { freePort, scrapedApp } from "../_support/prometheus.ts";

const scraped = scrapedApp();
const { series } = scraped;

/** A config file with a Prometheus watch of `query`, and the environment naming it. */
function configWith(query: string): Record<string, string> {
  const file = join(tempDir("service-watch-config-"), "service.yaml");
  writeFileSync(
    file,
    `watch:\n  forMs: 60000\n  intervalMs: 200\n  prometheus:\n    url: ${scraped.prometheus.url}\n    query: '${query}'\n    max: 0\n`,
  );
  return { SERVICE_CONFIG: file, SERVICE_RUN_SCRIPT: "true" };
}

describe("watch readings (docs/watch.md)", () => {
  test("`service check` runs the query once: its value now, or why it cannot be read", async () => {
    const query = await series("check");
    scraped.app.set("check", 2);
    await scraped.prometheus.until(query, 2);
    const repo = makeRepo();
    const env = configWith(query);
    const { stdout, code } = await runCli(["check"], { cwd: repo.clone, env });
    expect(stdout).toContain(
      `${query} ≤ 0 (Prometheus at ${scraped.prometheus.url}) every 0.2 s for 60 s; 2 failed checks in a row roll back; now 2`,
    );
    expect(code).toBe(0);
    const closed = `http://127.0.0.1:${freePort()}`;
    const down = await runCli(["check"], { cwd: repo.clone, env: { ...env, SERVICE_WATCH_PROMETHEUS_URL: closed } });
    expect(down.stdout).toContain(`(Prometheus at ${closed})`);
    expect(down.stdout + down.stderr).toContain("watch: the query cannot be read now: Prometheus: ECONNREFUSED");
  });

  test("a reading is one number, or why not: several series, no sample, not a number, a bad query, a bearer token", async () => {
    await series("many-a");
    await series("many-b");
    const read = (query: string, more: Record<string, string> = {}) =>
      queryPrometheus({ url: scraped.prometheus.url, query, max: 1, ...more }, { cwd: tempDir(), values: {} });
    expect(await read('sum(app_errors_total{series="many-a"})')).toEqual({ value: 0 });
    expect(await read("scalar(vector(0.25))")).toEqual({ value: 0.25 });
    const several = await read('app_errors_total{series=~"many-.*"}');
    expect(several).toEqual({ problem: "2 series, not one (aggregate the query, like sum(...))" });
    expect(await read('app_errors_total{series="none"}')).toEqual({
      problem: "no sample (the query matched no series)",
    });
    expect(await read("vector(0) / vector(0)")).toEqual({ problem: "not a number (NaN)" });
    const bad = await read("sum(");
    expect("problem" in bad && bad.problem).toStartWith("Prometheus: HTTP 400, bad_data: ");
    // A Prometheus behind a proxy that asks for a token: the token of the 0600 file, on the documented endpoint.
    const token = join(tempDir(), "token");
    writeFileSync(token, "tok-0123456789\n", { mode: 0o600 });
    const asked: { path: string; authorization: string | null }[] = [];
    using proxy = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (request) => {
        const url = new URL(request.url);
        asked.push({
          path: `${url.pathname}?${url.searchParams}`,
          authorization: request.headers.get("authorization"),
        });
        return Response.json({ status: "success", data: { resultType: "scalar", result: [1, "1"] } });
      },
    });
    const behind = {
      url: `http://127.0.0.1:${proxy.port}/prom`,
      query: "scalar(vector(1))",
      max: 1,
      bearerFile: token,
    };
    expect(await queryPrometheus(behind, { cwd: tempDir(), values: {} })).toEqual({ value: 1 });
    expect(asked).toEqual([
      { path: "/prom/api/v1/query?query=scalar%28vector%281%29%29", authorization: "Bearer tok-0123456789" },
    ]);
  });
});
