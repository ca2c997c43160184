/**
 * A real Prometheus (Debian's `prometheus`) on loopback, scraping every second a small app the test runs, whose error
 * counters the test drives: one series per name the test asks for, so each test watches its own.
 */
import { afterAll, beforeAll } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterRun } from "./after-run.ts";
import { collect, tempDir, waitFor } from "./helpers.ts";

export interface Metrics {
  /** The app's `/metrics` URL's host:port. */
  target: string;
  /** Sets the counter `app_errors_total{series="<series>"}`. */
  set(series: string, value: number): void;
  stop(): void;
}

/** The app Prometheus scrapes: `app_errors_total{series=…}` as the test sets them. */
export function metricsApp(): Metrics {
  const counters = new Map<string, number>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (request) => {
      if (new URL(request.url).pathname !== "/metrics") return new Response("not found", { status: 404 });
      const lines = ["# TYPE app_errors_total counter"];
      for (const [series, value] of counters) lines.push(`app_errors_total{series="${series}"} ${value}`);
      return new Response(`${lines.join("\n")}\n`, { headers: { "content-type": "text/plain; version=0.0.4" } });
    },
  });
  return {
    target: `127.0.0.1:${server.port}`,
    set: (series, value) => counters.set(series, value),
    stop: () => server.stop(true),
  };
}

export interface RunningPrometheus {
  url: string;
  /** Stops it (SIGTERM) and waits for the exit. */
  stop(): Promise<void>;
  /** The value of `query` now, or undefined without one sample. */
  value(query: string): Promise<number | undefined>;
  /** Waits until `query` gives `value` (a bounded wait of polls of the API). */
  until(query: string, value: number): Promise<void>;
}

/** A port free now: taken by the OS for a listener closed at once (Prometheus cannot be asked for port 0 and say it). */
export function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const { port } = listener;
  listener.stop(true);
  return port;
}

const started = new Set<Bun.Subprocess>();
afterRun(() => {
  for (const proc of started) proc.kill("SIGKILL");
});

/** Starts Prometheus scraping `target` every second, and waits until its API answers. */
export async function startPrometheus(target: string): Promise<RunningPrometheus> {
  const dir = tempDir("service-prometheus-");
  const config = join(dir, "prometheus.yml");
  writeFileSync(
    config,
    `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: app\n    static_configs:\n      - targets: ["${target}"]\n`,
  );
  for (let attempt = 1; ; attempt++) {
    const port = freePort();
    const proc = Bun.spawn(
      [
        "prometheus",
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, `data-${attempt}`)}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      { cwd: dir, stdout: "pipe", stderr: "pipe" },
    );
    started.add(proc);
    const log = { text: "" };
    void collect(proc.stderr, log);
    void collect(proc.stdout, log);
    const url = `http://127.0.0.1:${port}`;
    const up = await waitFor(
      async () => {
        if (proc.exitCode !== null) return "exited";
        const ready = await fetch(`${url}/-/ready`).then(
          (r) => r.ok,
          () => false,
        );
        return ready ? "ready" : undefined;
      },
      "Prometheus to be ready",
      30_000,
    );
    if (up === "exited") {
      started.delete(proc);
      // The port was taken between our look and its start: another one.
      if (attempt < 5 && /address already in use/.test(log.text)) continue;
      throw new Error(`prometheus exited: ${log.text}`);
    }
    const value = async (query: string) => {
      const answer = (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`).then((r) => r.json())) as {
        data?: { result?: { value: [number, string] }[] };
      };
      const result = answer.data?.result ?? [];
      return result.length === 1 ? Number(result[0]!.value[1]) : undefined;
    };
    return {
      url,
      value,
      until: async (query, expected) => {
        await waitFor(
          async () => (await value(query)) === expected,
          `${query} to be ${expected} in Prometheus`,
          30_000,
        );
      },
      stop: async () => {
        proc.kill("SIGTERM");
        await proc.exited;
        started.delete(proc);
      },
    };
  }
}

/** A test file's metrics app and the Prometheus that scrapes it (set once its `beforeAll` has run). */
export interface Scraped {
  app: Metrics;
  prometheus: RunningPrometheus;
  /** The query of a series of its own, at 0 and seen by Prometheus (before a deploy watches it). */
  series(name: string): Promise<string>;
}

/** Called at the top of a test file: the metrics app and Prometheus started before its tests, stopped after them. */
export function scrapedApp(): Scraped {
  const scraped = {
    series: async (name: string) => {
      const query = `sum(app_errors_total{series="${name}"})`;
      scraped.app.set(name, 0);
      await scraped.prometheus.until(query, 0);
      return query;
    },
  } as Scraped;
  beforeAll(async () => {
    scraped.app = metricsApp();
    scraped.prometheus = await startPrometheus(scraped.app.target);
  }, 60_000);
  afterAll(async () => {
    await scraped.prometheus?.stop();
    scraped.app?.stop();
  });
  return scraped;
}
