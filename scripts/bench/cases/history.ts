/**
 * Scale in history: `keepDeploys: 5000` with 5000 deploys on disk (copies of a real deploy's two files, one a
 * second back from now): `service logs` (its first page) timed from spawn to exit, and sequential deploys against
 * those of a service with an empty history, interleaved.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logStem } from "../../../src/history/record.ts";
import { baseEnv } from "../../../test/_support/repo.ts";
import { bareDeploy, interleaved, timedDeploy } from "../drive.ts";
import { BIN, type Bench, type Case, SECRET } from "../lab.ts";
import { fmtMs, fmtX, log, median } from "../measure.ts";

export const RECORDS = 5000;
const RUNS = 40;
const LOGS_RUNS = 5;
/** Between two deploys: the retention after a deploy of 5000 kept (about 10 ms of work) ends before the next is timed. */
const GAP_MS = 30;

/** Fills `cwd`'s history with RECORDS copies of the deploy whose files are in `template`, a second apart. */
function fillHistory(template: string, cwd: string): void {
  const names = readdirSync(template);
  const json = readFileSync(join(template, names.find((n) => n.endsWith(".json"))!), "utf8");
  const text = readFileSync(join(template, names.find((n) => n.endsWith(".log"))!), "utf8");
  const record = JSON.parse(json) as { id: string; startedAt: string };
  const dir = join(cwd, ".service", "logs");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const now = Date.now();
  for (let i = 0; i < RECORDS; i++) {
    const startedAt = new Date(now - (RECORDS - i) * 1000);
    const id = crypto.randomUUID();
    const stem = logStem(startedAt, id);
    const swap = (s: string) => s.replaceAll(record.id, id).replaceAll(record.startedAt, startedAt.toISOString());
    writeFileSync(join(dir, `${stem}.json`), swap(json), { mode: 0o640 });
    writeFileSync(join(dir, `${stem}.log`), swap(text), { mode: 0o640 });
  }
}

async function history(bench: Bench, repo: string): Promise<void> {
  log(`history: ${RECORDS} deploys on disk, keepDeploys ${RECORDS}`);
  const env = { SERVICE_SECRET: SECRET, SERVICE_REPO_PATH: repo, SERVICE_RUN_SCRIPT: "true" };
  const fresh = await bench.startServiceWith({}, { ...env, SERVICE_KEEP_DEPLOYS: String(RECORDS) });
  const full = join(bench.tmpRoot, "history-full");
  try {
    await timedDeploy(fresh.url);
    fillHistory(join(fresh.cwd, ".service", "logs"), full);
  } catch (error) {
    await fresh.stop();
    throw error;
  }
  const big = await bench.startServiceWith({}, { ...env, SERVICE_KEEP_DEPLOYS: String(RECORDS) }, full);
  try {
    const logsTimes: number[] = [];
    for (let i = 0; i < LOGS_RUNS; i++) {
      const t0 = performance.now();
      const proc = Bun.spawn([BIN, "logs"], { cwd: full, env: baseEnv(), stdout: "pipe", stderr: "pipe" });
      bench.track(proc);
      const [out, , code] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ]);
      logsTimes.push(performance.now() - t0);
      bench.untrack(proc);
      if (code !== 0 || out.split("\n").length < 20) throw new Error(`service logs failed (${code}): ${out}`);
    }
    const listed = median(logsTimes);
    bench.report.row(
      `\`service logs\` (first page of ${RECORDS} deploys), spawn to exit, median of ${LOGS_RUNS}`,
      "≤ 300 ms",
      fmtMs(listed),
      "",
      "",
      listed <= 300,
    );
    const t = await interleaved(
      RUNS,
      3,
      {
        full: () => timedDeploy(big.url),
        empty: () => timedDeploy(fresh.url),
        bare: () => bareDeploy(bench, repo),
      },
      GAP_MS,
    );
    const overhead = { full: t.full.p50 - t.bare.p50, empty: t.empty.p50 - t.bare.p50 };
    bench.report.row(
      `deploy overhead (p50 over bare), ${RECORDS} deploys kept vs an empty history (${RUNS} each, interleaved)`,
      "≤ empty history's + 10 %",
      `+${fmtMs(overhead.full)}`,
      `empty +${fmtMs(overhead.empty)}`,
      fmtX(overhead.full / overhead.empty),
      overhead.full <= overhead.empty * 1.1,
    );
    bench.report.note(
      `history: deploy p50 ${fmtMs(t.full.p50)} with ${RECORDS} deploys kept (retention removes one per deploy), ${fmtMs(t.empty.p50)} with an empty history, ${fmtMs(t.bare.p50)} bare; service logs ${logsTimes.map((v) => v.toFixed(0)).join(", ")} ms`,
    );
  } finally {
    await big.stop();
    await fresh.stop();
  }
}

export default { name: "history", run: (bench) => history(bench, bench.repo("history")) } satisfies Case;
