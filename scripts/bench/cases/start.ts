/**
 * Start to listening and idle memory of the compiled binary with the README's quick start configuration (a
 * `service.yaml` in the clone, the service started there, its secret generated at its first start), beside a
 * compiled Bun.serve hello world's (the runtime's own floor) and adnanh/webhook's; then the idle memory of each set
 * of optional features, one added at a time to that configuration, built into the binary but loaded only when
 * configured (docs/architecture.md "Optional features"). The executables are copied fresh first: a file's pages in
 * the page cache map in larger pieces right after it was written than once they aged, which moves the file-backed
 * part of VmRSS by up to 6 MB; fresh copies of both compare alike.
 */
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv } from "../../../test/_support/repo.ts";
import { BIN, type Bench, type Case, freePort, SECRET, waitForListen } from "../lab.ts";
import { fmtMB, fmtMs, fmtX, log, median, procStatus, sleep } from "../measure.ts";

const START_RUNS = 15;
const IDLE_RUNS = 3;
/** Against the hello world's, same run. */
const START_X = 2;
const IDLE_X = 1.5;

/** The README's quick start `service.yaml`, as written there. */
const QUICK_START = 'hostname: 127.0.0.1\nrunScript: |\n  echo "deploying $(git rev-parse --short HEAD)"\n  ls\n';

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

/** Each set of optional features, as YAML added to the quick start's (`dir`: a directory of its own to use). */
const FEATURES: { name: string; yaml: (dir: string, adminPort: number) => string }[] = [
  { name: "plain (the quick start)", yaml: () => "" },
  { name: "+ admin listener", yaml: (_, port) => `adminPort: ${port}\nadminHostname: 127.0.0.1\n` },
  {
    name: "+ gate (with its status)",
    yaml: (dir) => {
      writeFileSync(join(dir, "status-token"), "a-token-for-the-bench\n", { mode: 0o600 });
      return `status:\n  provider: github\n  repo: acme/web\n  tokenFile: ${join(dir, "status-token")}\ngate:\n  checks: [ci/build]\n`;
    },
  },
  { name: "+ triggers (paths, tags, skip markers)", yaml: () => 'paths: ["src/**"]\ntags: "v*"\nskipMarkers: true\n' },
  { name: "+ limits", yaml: () => "limits:\n  memory: 256M\n  tasks: 64\n" },
  { name: "+ releases", yaml: (dir) => `releases:\n  path: ${join(dir, "releases")}\n` },
  { name: "+ notify (a webhook)", yaml: () => "notify:\n  - url: http://127.0.0.1:9/hook\n    format: json\n" },
  { name: "+ audit kept 30 days", yaml: () => "audit:\n  keepDays: 30\n" },
];

async function startAndIdle(bench: Bench): Promise<void> {
  const { hasWebhook } = bench;
  const cwd = join(bench.tmpRoot, "starts");
  mkdirSync(cwd, { recursive: true });
  const service = join(cwd, "service");
  copyFileSync(BIN, service);
  const hello = helloWorld(cwd);
  const hooks = join(cwd, "hooks.json");
  writeFileSync(hooks, JSON.stringify([{ id: "true", "execute-command": "/bin/true" }]));
  /** Spawn (in `dir`) to the first successful connect; with `idle`, also VmRSS (and its split) 1 s later. */
  const run = async (
    argv: (port: number) => string[],
    env: (port: number) => Record<string, string>,
    dir = cwd,
    idle = false,
  ) => {
    const port = await freePort();
    const t0 = performance.now();
    const proc = Bun.spawn(argv(port), {
      cwd: dir,
      env: env(port),
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
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
  const serviceEnv = (port: number) => baseEnv({ SERVICE_PORT: String(port) });
  /** The same settings from the environment, no config file: what the YAML parser costs. */
  const envDir = join(cwd, "by-environment");
  mkdirSync(envDir, { recursive: true });
  const byEnvironment = (port: number) =>
    baseEnv({
      SERVICE_PORT: String(port),
      SERVICE_HOSTNAME: "127.0.0.1",
      SERVICE_SECRET: SECRET,
      SERVICE_REPO_PATH: bench.repo("quick-start"),
      SERVICE_RUN_SCRIPT: 'echo "deploying $(git rev-parse --short HEAD)"; ls',
    });
  /** The quick start's clone, and one per feature set: each its own `service.yaml`, started in it. */
  const clones = FEATURES.map((feature, i) => {
    const clone = bench.repo(i === 0 ? "quick-start" : `feature-${i}`);
    return { feature, clone };
  });
  const configure = async () => {
    for (const { feature, clone } of clones)
      writeFileSync(join(clone, "service.yaml"), QUICK_START + feature.yaml(clone, await freePort()));
  };
  await configure();
  // The first start generates the webhook secret (and says it): not what is measured.
  for (const { clone } of clones) await run(() => [service], serviceEnv, clone);
  const quickStart = clones[0]!.clone;
  const runners = {
    service: () => run(() => [service], serviceEnv, quickStart),
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
  const starts = { service: [] as number[], env: [] as number[], webhook: [] as number[], hello: [] as number[] };
  for (let i = 0; i < START_RUNS; i++) {
    starts.service.push((await runners.service()).ms);
    starts.env.push((await run(() => [service], byEnvironment, envDir)).ms);
    if (hasWebhook) starts.webhook.push((await runners.webhook()).ms);
    starts.hello.push((await runners.hello()).ms);
  }
  const [ours, theirs, floor] = [median(starts.service), median(starts.webhook), median(starts.hello)];
  bench.report.row(
    `start to listening, the quick start's config (median of ${START_RUNS})`,
    `≤ ${START_X}× the hello world's`,
    fmtMs(ours),
    `Bun hello world ${fmtMs(floor)}${hasWebhook ? `, webhook ${fmtMs(theirs)}` : ""}`,
    fmtX(ours / floor),
    ours <= START_X * floor,
  );
  bench.report.row(
    `start to listening, the same settings from the environment, no config file (median of ${START_RUNS})`,
    "(info)",
    fmtMs(median(starts.env)),
    `the quick start's ${fmtMs(ours)}: its config file read and parsed`,
    fmtX(median(starts.env) / floor),
    undefined,
  );

  log(`idle memory: ${IDLE_RUNS} starts of each, and of each feature set`);
  const idle = { webhook: [] as number[], hello: [] as number[], env: [] as number[] };
  const byFeature = clones.map(() => [] as NonNullable<ReturnType<typeof procStatus>>[]);
  for (let i = 0; i < IDLE_RUNS; i++) {
    // Fresh copies of both executables for each round (see above).
    copyFileSync(BIN, service);
    helloWorld(cwd);
    await configure();
    for (const [k, { clone }] of clones.entries()) {
      const s = await run(() => [service], serviceEnv, clone, true);
      if (s.status) byFeature[k]!.push(s.status);
    }
    const e = await run(() => [service], byEnvironment, envDir, true);
    if (e.status) idle.env.push(e.status.rss);
    if (hasWebhook) {
      const w = await run(
        (port) => ["webhook", "-hooks", hooks, "-ip", "127.0.0.1", "-port", String(port)],
        () => baseEnv(),
        cwd,
        true,
      );
      if (w.status) idle.webhook.push(w.status.rss);
    }
    const h = await run(
      (port) => [hello, String(port)],
      () => baseEnv(),
      cwd,
      true,
    );
    if (h.status) idle.hello.push(h.status.rss);
  }
  const rssOf = (k: number) => median(byFeature[k]!.map((s) => s.rss));
  const part = (k: number, key: "anon" | "file") => median(byFeature[k]!.map((s) => s[key]));
  const [rss, helloRss] = [rssOf(0), median(idle.hello)];
  bench.report.row(
    `idle memory, the quick start's config (VmRSS 1 s after start, median of ${IDLE_RUNS})`,
    `≤ ${IDLE_X}× the hello world's`,
    fmtMB(rss),
    `Bun hello world ${fmtMB(helloRss)}${hasWebhook ? `, webhook ${fmtMB(median(idle.webhook))}` : ""}`,
    fmtX(rss / helloRss),
    rss <= IDLE_X * helloRss,
  );
  bench.report.row(
    "idle memory, the same settings from the environment, no config file",
    "(info)",
    fmtMB(median(idle.env)),
    `the quick start's ${fmtMB(rss)}: its config file read and parsed`,
    fmtX(median(idle.env) / helloRss),
    undefined,
  );
  for (const [k, { feature }] of clones.entries()) {
    if (k === 0) continue;
    const more = rssOf(k) - rss;
    bench.report.row(
      `idle memory ${feature.name}`,
      "(info)",
      fmtMB(rssOf(k)),
      `plain ${fmtMB(rss)} (${more >= 0 ? "+" : ""}${fmtMB(more)}; anonymous +${fmtMB(part(k, "anon") - part(0, "anon"))})`,
      "",
      undefined,
    );
  }
  bench.report.note(
    `idle memory: ${fmtMB(part(0, "anon"))} anonymous + ${fmtMB(part(0, "file"))} file-backed (pages of the executable: Bun's runtime, the node: modules it implements in JavaScript, the service's code); the hello world ${fmtMB(helloRss)}`,
  );
}

export default { name: "start and idle memory", run: startAndIdle } satisfies Case;
