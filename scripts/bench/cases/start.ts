/**
 * Start to listening and idle memory of the compiled binary, beside adnanh/webhook's and a compiled Bun.serve
 * hello world's (the runtime's own floor). The executables are copied fresh first: a file's pages in the page
 * cache map in larger pieces right after it was written than once they aged, which moves the file-backed part of
 * VmRSS by up to 6 MB; fresh copies of both compare alike.
 */
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv } from "../../../test/_support/repo.ts";
import { BIN, type Bench, type Case, freePort, SECRET, waitForListen } from "../lab.ts";
import { fmtMB, fmtMs, log, MB, median, procStatus, sleep } from "../measure.ts";

const START_RUNS = 15;

/** A compiled Bun.serve that answers every request (port from argv), built with the bench's Bun. */
function helloWorld(dir: string): string {
  const source = join(dir, "hello.ts");
  const out = join(dir, "hello");
  writeFileSync(
    source,
    `Bun.serve({ port: Number(process.argv[2]), hostname: "127.0.0.1", fetch: () => new Response("hello") });\n`,
  );
  const built = Bun.spawnSync([process.execPath, "build", "--compile", "--minify", source, "--outfile", out], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (built.exitCode !== 0) throw new Error(`the hello world did not build: ${built.stderr}`);
  return out;
}

async function startAndIdle(bench: Bench, repo: string): Promise<void> {
  const { hasWebhook } = bench;
  const cwd = join(bench.tmpRoot, "starts");
  mkdirSync(cwd, { recursive: true });
  const service = join(cwd, "service");
  copyFileSync(BIN, service);
  const hello = helloWorld(cwd);
  const hooks = join(cwd, "hooks.json");
  writeFileSync(hooks, JSON.stringify([{ id: "true", "execute-command": "/bin/true" }]));
  const serviceEnv = (port: number) =>
    baseEnv({
      SERVICE_PORT: String(port),
      SERVICE_HOSTNAME: "127.0.0.1",
      SERVICE_SECRET: SECRET,
      SERVICE_REPO_PATH: repo,
      SERVICE_RUN_SCRIPT: "true",
    });
  /** Spawn to the first successful connect; with `idle`, also VmRSS (and its split) 1 s later. */
  const run = async (argv: (port: number) => string[], env: (port: number) => Record<string, string>, idle = false) => {
    const port = await freePort();
    const t0 = performance.now();
    const proc = Bun.spawn(argv(port), { cwd, env: env(port), stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    bench.track(proc);
    try {
      await waitForListen(port, 5000, () => proc.exitCode === null);
      const ms = performance.now() - t0;
      if (!idle) return { ms };
      await sleep(1000);
      return { ms, status: procStatus(proc.pid) };
    } finally {
      await bench.stopProcess(proc);
    }
  };
  const runners = {
    service: () => run(() => [service], serviceEnv),
    webhook: () =>
      run(
        (port) => ["webhook", "-hooks", hooks, "-ip", "127.0.0.1", "-port", String(port)],
        () => baseEnv(),
      ),
    hello: () =>
      run(
        (port) => [hello, String(port)],
        () => baseEnv(),
      ),
  };
  log(`start to listening: ${START_RUNS} starts of each, alternating`);
  const starts = { service: [] as number[], webhook: [] as number[], hello: [] as number[] };
  for (let i = 0; i < START_RUNS; i++) {
    starts.service.push((await runners.service()).ms);
    if (hasWebhook) starts.webhook.push((await runners.webhook()).ms);
    starts.hello.push((await runners.hello()).ms);
  }
  const [ours, theirs, floor] = [median(starts.service), median(starts.webhook), median(starts.hello)];
  bench.report.row(
    `start to listening (median of ${START_RUNS})`,
    "≤ 25 ms",
    fmtMs(ours),
    `${hasWebhook ? `webhook ${fmtMs(theirs)}, ` : ""}Bun hello world ${fmtMs(floor)}`,
    "",
    ours <= 25,
  );

  log("idle memory: three starts of each");
  const idle = { service: [] as number[], webhook: [] as number[], hello: [] as number[] };
  let split = "";
  for (let i = 0; i < 3; i++) {
    const s = await run(() => [service], serviceEnv, true);
    if (s.status) {
      idle.service.push(s.status.rss);
      split = `${fmtMB(s.status.anon)} anonymous + ${fmtMB(s.status.file)} file-backed`;
    }
    if (hasWebhook) {
      const w = await run(
        (port) => ["webhook", "-hooks", hooks, "-ip", "127.0.0.1", "-port", String(port)],
        () => baseEnv(),
        true,
      );
      if (w.status) idle.webhook.push(w.status.rss);
    }
    const h = await run(
      (port) => [hello, String(port)],
      () => baseEnv(),
      true,
    );
    if (h.status) idle.hello.push(h.status.rss);
  }
  const rss = median(idle.service);
  bench.report.row(
    "idle memory (VmRSS 1 s after start, median of 3)",
    "≤ 40 MB",
    fmtMB(rss),
    `${hasWebhook ? `webhook ${fmtMB(median(idle.webhook))}, ` : ""}Bun hello world ${fmtMB(median(idle.hello))}`,
    "",
    rss <= 40 * MB,
  );
  bench.report.note(
    `idle memory: ${split} (pages of the executable: Bun's runtime, the node: modules it implements in JavaScript, the service's code)`,
  );
}

export default {
  name: "start and idle memory",
  run: (bench) => startAndIdle(bench, bench.repo("repo")),
} satisfies Case;
