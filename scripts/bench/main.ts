/**
 * `npm run bench`: measures the service side by side with adnanh/webhook (Debian package `webhook`) and with the
 * bare commands run by `sh`, on the same repositories (a bare remote and a clone in a temp dir), and prints
 * every figure against its target, first as an aligned table, then as Markdown for the README.
 *
 * The service runs as the compiled binary (dist/service; built first when missing or older than src/). Every
 * case starts its own server, so each peak RSS (VmHWM) belongs to that case alone. Every step is bounded in
 * time; every process started here (and any process left running in the temp dir) is killed at the end.
 *
 * Usage: npm run bench -- [--no-build] [--only start,unauthorized,latency,scale,history,dora,burst,latest,stream,signed,releases,slots,limits,carry,pruning,memory,overhead,previews]   (BENCH_BIN=<binary> to measure another build)
 */
import { Bench, type Case } from "./lab.ts";
import { bounded, elapsedSeconds, log, which } from "./measure.ts";
import { ensureBinary, machine } from "./setup.ts";

/** The cases in the order they run, by file in cases/: a new case is its file and one line here. */
const CASES = [
  "start", // start and idle memory
  "unauthorized",
  "latency",
  "scale-apps", // 200 apps against one
  "history", // 5000 deploys kept
  "dora", // the DORA figures of 10 000 records
  "burst",
  "latest",
  "stream", // with the slow client
  "signed-flood",
  "releases", // zero downtime behind nginx, the instant rollback
  "slots", // build slots: 8 apps at once, maxConcurrentDeploys 2 and 0
  "limits", // a 1 GiB build under limits.memory 256M
  "carry", // a carried node_modules against --no-carry and in place
  "pruning", // releases of 20 000 files pruned after [done]
  "memory-after-load", // idle RSS after a burst of 200 deploys
  "overhead", // a trivial deploy, accounted by its phases
  "previews", // a pull request's preview of 20 000 files, its teardown, the disk of 10
];
/** The whole run is cut (with cleanup) after this. */
const BENCH_DEADLINE_MS = 12 * 60_000;
const CASE_DEADLINE_MS = 180_000;

async function loadCases(): Promise<Case[]> {
  return Promise.all(CASES.map(async (file) => ((await import(`./cases/${file}.ts`)) as { default: Case }).default));
}

async function main(bench: Bench): Promise<number> {
  const header = machine();
  for (const h of header) log(h);
  if (!bench.hasWebhook || !bench.hasWrk) {
    const missing = [!bench.hasWebhook && "webhook", !bench.hasWrk && "wrk"].filter(Boolean).join(" ");
    const message = `${missing} not found: install with \`sudo apt-get update && sudo apt-get install -y ${missing}\` (Debian/Ubuntu; adnanh/webhook is the package "webhook"); the figures that need it say n/a`;
    log(message);
    bench.report.note(message);
  }
  await ensureBinary(bench);
  const only = process.argv.includes("--only")
    ? (process.argv[process.argv.indexOf("--only") + 1] ?? "").split(",")
    : undefined;
  for (const { name, run } of await loadCases()) {
    if (only && !only.some((o) => name.startsWith(o))) continue;
    try {
      await bounded(run(bench), CASE_DEADLINE_MS, `the ${name} case`);
    } catch (error) {
      log(`the ${name} case failed: ${(error as Error).message}`);
      bench.report.failed(name, (error as Error).message);
    }
  }
  log(`done in ${elapsedSeconds().toFixed(0)} s`);
  bench.report.print(header);
  return bench.report.anyFailed ? 1 : 0;
}

const bench = new Bench(!!which("webhook"), !!which("wrk"));
let exitCode = 2;
const watchdog = setTimeout(() => {
  log(`the bench ran over ${BENCH_DEADLINE_MS / 60_000} minutes: stopping`);
  void bench.cleanup().finally(() => process.exit(2));
}, BENCH_DEADLINE_MS);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    log(`${signal}: cleaning up`);
    void bench.cleanup().finally(() => process.exit(130));
  });
}
try {
  exitCode = await main(bench);
} catch (error) {
  log(`failed: ${(error as Error).stack ?? error}`);
} finally {
  clearTimeout(watchdog);
  await bench.cleanup();
}
process.exit(exitCode);
