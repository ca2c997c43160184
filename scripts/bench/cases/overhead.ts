/**
 * A deploy's own overhead, from its record's phases: sequential deploys of script `true` on an up-to-date clone;
 * per deploy its durationMs (start to `[done]`), the `pull` and `run` phases, and what is left (the service's own
 * work: the queue ticket, the records, the lines); medians.
 */
import { type DeployRecord, deploy, phaseMedians, phaseMs, recordOf } from "../deploys.ts";
import type { Bench, Case } from "../lab.ts";
import { fmtMs, log, median } from "../measure.ts";

const RUNS = 20;
const WARM_UP = 3;
/** The service's own work in a deploy: all but the pull and the script. */
const OWN_MS = 2;

async function overhead(bench: Bench): Promise<void> {
  log(`overhead: ${RUNS} deploys of script true, from their phases`);
  const server = await bench.startService(bench.repo("overhead"), "true");
  const records: DeployRecord[] = [];
  const client: number[] = [];
  try {
    for (let i = 0; i < RUNS + WARM_UP; i++) {
      const run = await deploy(server.url);
      const record = recordOf(server.cwd, run.id);
      if (!run.ok || !record?.result) throw new Error(`a deploy failed:\n${run.text.slice(-2000)}`);
      if (i < WARM_UP) continue;
      records.push(record);
      client.push(run.ms);
    }
  } finally {
    await server.stop();
  }
  const total = (r: DeployRecord) => r.result?.durationMs ?? NaN;
  const notRun = median(records.map((r) => total(r) - phaseMs(r, "run")));
  const own = median(records.map((r) => total(r) - phaseMs(r, "run") - phaseMs(r, "pull")));
  bench.report.row(
    `overhead: a deploy of script true, durationMs − run phase (median of ${RUNS})`,
    "(info)",
    fmtMs(notRun),
    `durationMs ${fmtMs(median(records.map(total)))}, POST → [done] ${fmtMs(median(client))}`,
    "",
    undefined,
  );
  bench.report.row(
    `overhead: the service's own part, durationMs − pull − run phases (median of ${RUNS})`,
    `≤ ${OWN_MS} ms`,
    fmtMs(own),
    `pull ${fmtMs(median(records.map((r) => phaseMs(r, "pull"))))}, run ${fmtMs(median(records.map((r) => phaseMs(r, "run"))))}`,
    "",
    own <= OWN_MS,
  );
  bench.report.note(`overhead: phases (medians of ${RUNS}, whole ms as recorded): ${phaseMedians(records)}`);
}

export default { name: "overhead", run: overhead } satisfies Case;
