/**
 * Memory after load: a server's RSS when idle after a burst of 200 concurrent deploys (script `true`), 1 s, 10 s and
 * 30 s after the last answer, against its idle RSS before the burst: whether what the burst took is given back.
 */
import type { Bench, Case } from "../lab.ts";
import { fmtMB, log, MB, procStatus, sleep } from "../measure.ts";
import { BURST, concurrentDeploys } from "./burst.ts";

/** Seconds after the burst at which the idle server is measured. */
const AFTER_S = [1, 10, 30];
/** What the idle server may keep of the burst, at the last measure. */
const KEPT_MB = 10;

const split = (s: ReturnType<typeof procStatus>) =>
  s ? `${fmtMB(s.rss)} (${fmtMB(s.anon)} anonymous + ${fmtMB(s.file)} file-backed)` : "n/a";

async function memoryAfterLoad(bench: Bench): Promise<void> {
  log(`memory after load: idle RSS before and after ${BURST} concurrent deploys`);
  const server = await bench.startService(bench.repo("memory"), "true", { SERVICE_QUEUE_LIMIT: String(BURST + 50) });
  try {
    await sleep(1000);
    const before = procStatus(server.pid);
    const burst = await concurrentDeploys(server, "the burst before idling");
    if (burst.ok !== BURST) throw new Error(`${BURST - burst.ok} of the burst's deploys did not end ok`);
    const t0 = performance.now();
    const after: { s: number; status: ReturnType<typeof procStatus> }[] = [];
    for (const s of AFTER_S) {
      await sleep(Math.max(0, s * 1000 - (performance.now() - t0)));
      after.push({ s, status: procStatus(server.pid) });
    }
    const last = after.at(-1)!.status;
    const kept = (last?.rss ?? NaN) - (before?.rss ?? NaN);
    bench.report.row(
      `memory after load: idle RSS ${AFTER_S.at(-1)} s after ${BURST} concurrent deploys − idle RSS before`,
      `≤ ${KEPT_MB} MB`,
      `${fmtMB(kept)} (${fmtMB(before?.rss ?? NaN)} → ${fmtMB(last?.rss ?? NaN)})`,
      `peak during the burst ${fmtMB(Math.max(burst.peak, burst.hwm))}`,
      "",
      kept <= KEPT_MB * MB,
    );
    const anon = (last?.anon ?? NaN) - (before?.anon ?? NaN);
    bench.report.row(
      "memory after load: of which anonymous memory (heaps), same moments",
      "(info)",
      `${fmtMB(anon)} (${fmtMB(before?.anon ?? NaN)} → ${fmtMB(last?.anon ?? NaN)})`,
      "the rest: file-backed pages of the executable the deploys touched",
      "",
      undefined,
    );
    bench.report.note(
      `memory after load: idle before ${split(before)}; the burst took ${burst.seconds.toFixed(1)} s, sampled peak ${fmtMB(burst.peak)} (${burst.split}); idle after it: ${after.map(({ s, status }) => `${s} s ${split(status)}`).join(", ")}`,
    );
  } finally {
    await server.stop();
  }
}

export default { name: "memory-after-load", run: memoryAfterLoad } satisfies Case;
