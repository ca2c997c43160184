/**
 * Memory after load: a server's memory when idle after a burst of 200 concurrent deploys (script `true`), 1 s, 10 s,
 * 30 s and 60 s after the last answer, against its idle memory before the burst: whether what the burst took is
 * given back. The anonymous memory (the heaps, /proc/<pid>/status RssAnon) is what is judged; the file-backed pages
 * (RssFile: the executable's code the deploys ran, mapped once and kept) are reported apart.
 */
import type { Bench, Case } from "../lab.ts";
import { fmtMB, log, MB, procStatus, sleep } from "../measure.ts";
import { BURST, concurrentDeploys } from "./burst.ts";

/** Seconds after the burst at which the idle server is measured. */
const AFTER_S = [1, 10, 30, 60];
/** What the idle server may keep of the burst in anonymous memory, at the last measure. */
const KEPT_ANON_MB = 5;

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
    const anon = (last?.anon ?? NaN) - (before?.anon ?? NaN);
    bench.report.row(
      `memory after load: anonymous memory (RssAnon) ${AFTER_S.at(-1)} s after ${BURST} concurrent deploys − idle before`,
      `≤ ${KEPT_ANON_MB} MB`,
      `${fmtMB(anon)} (${fmtMB(before?.anon ?? NaN)} → ${fmtMB(last?.anon ?? NaN)})`,
      `peak during the burst ${fmtMB(Math.max(burst.peak, burst.hwm))}`,
      "",
      anon <= KEPT_ANON_MB * MB,
    );
    bench.report.row(
      "memory after load: file-backed pages (RssFile), same moments",
      "(info)",
      `${fmtMB((last?.file ?? NaN) - (before?.file ?? NaN))} (${fmtMB(before?.file ?? NaN)} → ${fmtMB(last?.file ?? NaN)})`,
      `VmRSS ${fmtMB(before?.rss ?? NaN)} → ${fmtMB(last?.rss ?? NaN)}: the executable's code the deploys ran, mapped once`,
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
