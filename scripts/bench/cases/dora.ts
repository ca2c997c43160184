/**
 * The DORA figures of 10 000 records (docs/log-files.md "DORA figures"): computed from records held in memory, and
 * read from a history of 10 000 record files over 90 days as `service stats`, the admin API and `/metrics` read it
 * (the first reading parses every file, a later one only the new).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type DoraRecord, doraFigures } from "../../../src/history/dora.ts";
import { readDora } from "../../../src/history/dora-read.ts";
import { logStem } from "../../../src/history/record.ts";
import type { Bench, Case } from "../lab.ts";
import { fmtMs, log, median } from "../measure.ts";

const RECORDS = 10_000;
const RUNS = 7;
const DAY_MS = 86_400_000;

/** A deploy record as a deploy writes it, without its output: one failed in ten, each with a lead. */
function recordAt(i: number, now: number): DoraRecord & { id: string } {
  const start = new Date(now - 90 * DAY_MS + ((i + 0.5) * 90 * DAY_MS) / RECORDS);
  const ok = i % 10 !== 0;
  const id = crypto.randomUUID();
  return {
    status: "done",
    id,
    app: "web",
    trigger: "webhook",
    startedAt: start.toISOString(),
    finishedAt: new Date(start.getTime() + 20_000).toISOString(),
    result: {
      ok,
      rolledBack: false,
      run: { exitCode: ok ? 0 : 1 },
      commit: { sha: (ok ? i + 1 : i).toString(16).padStart(40, "0") },
      previousCommit: { sha: i.toString(16).padStart(40, "0") },
      target: { sha: (i + 1).toString(16).padStart(40, "0") },
      ...(ok ? { lead: { medianSeconds: 3600 + (i % 7) * 600 } } : {}),
    },
  };
}

function timed(run: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  return median(times);
}

async function dora(bench: Bench): Promise<void> {
  log(`dora: the figures of ${RECORDS} records`);
  const now = Date.now();
  const records = Array.from({ length: RECORDS }, (_, i) => recordAt(i, now));
  const cwd = join(bench.tmpRoot, "dora");
  const dir = join(cwd, ".service", "logs");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const record of records) {
    const stem = logStem(new Date(record.startedAt as string), record.id);
    writeFileSync(join(dir, `${stem}.json`), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
    writeFileSync(join(dir, `${stem}.log`), "", { mode: 0o600 });
  }
  const computed = timed(() => {
    if (doraFigures(records, "web", 90, now).counted !== RECORDS) throw new Error("not every record was counted");
  });
  const readAll = () => {
    if (readDora(cwd, ["web"], 90, now).figures[0]!.counted !== RECORDS) throw new Error("records were missed");
  };
  // The first reading parses every file; the next ones (a dashboard, /metrics) only those that are new.
  const t0 = performance.now();
  readAll();
  const cold = performance.now() - t0;
  const read = timed(readAll);
  bench.report.row(
    `DORA figures of ${RECORDS} records (90 days), computed, median of ${RUNS}`,
    "≤ 200 ms",
    fmtMs(computed),
    "",
    "",
    computed <= 200,
  );
  bench.report.row(
    `DORA figures of ${RECORDS} record files (90 days), read again and computed (files listed, records known), median of ${RUNS}`,
    "≤ 200 ms",
    fmtMs(read),
    `first reading ${fmtMs(cold)}`,
    "",
    read <= 200,
  );
}

export default { name: "dora", run: dora } satisfies Case;
