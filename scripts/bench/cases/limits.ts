/**
 * Limits (docs/production.md "Limits"): a build that holds 1 GiB (`head -c 1G /dev/zero | tail -c 1G`: tail keeps
 * the last GiB of a pipe in memory) under `limits.memory: 256M` is killed by the kernel (cgroups): its ending,
 * `killedBy`, the time from the script's start to the kill (the record's `run` phase), and the service's own RSS
 * before and after. The same build with no limit, for comparison, when the machine has the memory.
 */
import { freemem } from "node:os";
import { deploy, phaseMs, recordOf } from "../deploys.ts";
import type { Bench, Case } from "../lab.ts";
import { fmtMB, fmtMs, log, MB, procStatus, sleep } from "../measure.ts";

const LIMIT = "256M";
const HOG = "head -c 1G /dev/zero | tail -c 1G > /dev/null";
/** The service's RSS after the kill may exceed what it was before by this much (the deploy's own buffers). */
const FLAT_MB = 10;

async function measure(bench: Bench, limits: Record<string, string>) {
  const server = await bench.startService(bench.repo("limits"), HOG, limits);
  try {
    await sleep(300);
    const before = procStatus(server.pid)?.rss ?? NaN;
    const run = await deploy(server.url);
    // The record is final before `[done]` is sent.
    const record = recordOf(server.cwd, run.id);
    await sleep(1000);
    const after = procStatus(server.pid)?.rss ?? NaN;
    return { run, record, before, after, runMs: phaseMs(record, "run") };
  } finally {
    await server.stop();
  }
}

async function limits(bench: Bench): Promise<void> {
  const figures = [
    [`limits: a 1 GiB build under limits.memory ${LIMIT}`, "killed: ok=false, killedBy memory"],
    ["limits: service RSS 1 s after the kill − before the deploy", `≤ ${FLAT_MB} MB`],
  ] as const;
  log(`limits: a build holding 1 GiB under limits.memory ${LIMIT}, and uncapped`);
  const capped = await measure(bench, { SERVICE_LIMITS_MEMORY: LIMIT });
  const refused = /^\[\w+\] limits: .*; nothing runs$/m.exec(capped.run.text)?.[0];
  if (refused) {
    for (const [figure, target] of figures) bench.report.na(figure, target, `cgroups cannot be used here: ${refused}`);
    return;
  }
  const killedLine = /\[run\] killed: .*/.exec(capped.run.text)?.[0] ?? "no [run] killed line";
  const killed = !capped.run.ok && capped.record?.result?.killedBy === "memory";
  // Uncapped only with room to spare: the build holds 1 GiB, the machine is shared.
  const room = freemem() >= 3 * 1024 * MB;
  const uncapped = room ? await measure(bench, {}) : undefined;
  bench.report.row(
    figures[0][0],
    figures[0][1],
    killed
      ? `killed after ${fmtMs(capped.runMs)} (run phase)`
      : `not killed: ${capped.record?.result?.killedBy ?? "no killedBy"}`,
    uncapped
      ? `uncapped: ${uncapped.run.ok ? "ok" : "failed"} after ${fmtMs(uncapped.runMs)}`
      : `uncapped: n/a (${fmtMB(freemem())} free)`,
    "",
    killed,
  );
  const growth = capped.after - capped.before;
  bench.report.row(
    figures[1][0],
    figures[1][1],
    `${fmtMB(growth)} (${fmtMB(capped.before)} → ${fmtMB(capped.after)})`,
    uncapped ? `uncapped: ${fmtMB(uncapped.after - uncapped.before)}` : "",
    "",
    growth <= FLAT_MB * MB,
  );
  bench.report.note(
    `limits: the capped deploy said "${killedLine}"; from the request to its [done] ${fmtMs(capped.run.ms)}` +
      (uncapped
        ? `; uncapped the same build held its GiB and ended ${uncapped.run.ok ? "ok" : "not ok"} in ${fmtMs(uncapped.run.ms)} (run phase ${fmtMs(uncapped.runMs)})`
        : `; the uncapped run was left out: ${fmtMB(freemem())} free, 3 GiB wanted`),
  );
}

export default { name: "limits", run: limits } satisfies Case;
