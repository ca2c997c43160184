/**
 * A burst of concurrent authorized deploys on one repository with `queuePolicy: latest`: the first deploy runs,
 * the next one waits and every later request joins it, so at most 2 deploys run and every client still gets
 * `[done]`.
 */
import { join } from "node:path";
import type { Bench, Case } from "../lab.ts";
import { fmtMB, log, MB } from "../measure.ts";
import { BURST, concurrentDeploys, overlaps } from "./burst.ts";

async function latestBurst(bench: Bench, repo: string): Promise<void> {
  log(`latest: ${BURST} concurrent deploys on one repo, queuePolicy latest`);
  const file = join(bench.tmpRoot, "burst-latest.txt");
  const server = await bench.startService(repo, `s=$(date +%s%N) && sleep 0.2 && echo "$s $(date +%s%N)" >> ${file}`, {
    SERVICE_QUEUE_POLICY: "latest",
  });
  try {
    const { before, seconds, peak, hwm, split, ok } = await concurrentDeploys(server, "the latest burst");
    const { runs, overlapping } = overlaps(file);
    bench.report.note(
      `latest: ${BURST} requests served in ${seconds.toFixed(1)} s by ${runs} deploys; RSS ${fmtMB(before)} before, sampled peak ${fmtMB(peak)} (${split}), VmHWM ${fmtMB(hwm)}`,
    );
    bench.report.row("latest: deploys run for the burst", "≤ 2", `${runs}`, "", "", runs <= 2 && overlapping === 0);
    bench.report.row(
      "latest: clients ending `[done] ok=true`",
      `${BURST}/${BURST}`,
      `${ok}/${BURST}`,
      "",
      "",
      ok === BURST,
    );
    const growth = Math.max(peak, hwm) - before;
    bench.report.row("latest: server RSS growth (peak − before)", "≤ 30 MB", fmtMB(growth), "", "", growth <= 30 * MB);
  } finally {
    await server.stop();
  }
}

export default { name: "latest", run: (bench) => latestBurst(bench, bench.repo("latest")) } satisfies Case;
