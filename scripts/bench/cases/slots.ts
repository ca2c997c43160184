/**
 * Build slots (docs/deploy-control.md "Build slots"): 8 apps of one service, each its own repository, all pushed
 * at once with a 2 s build, under `maxConcurrentDeploys: 2` and with no limit (`0`). Each script appends its start
 * and end to one file: the most scripts running at once, every deploy's ending, the wall time; `/metrics` read
 * every 100 ms while they run: slots in use and deploys waiting for one.
 */
import { join } from "node:path";
import { stringify } from "yaml";
import { deploy, metrics, peakConcurrency } from "../deploys.ts";
import { type Bench, type Case, freePort, SECRET, waitForListen } from "../lab.ts";
import { bounded, log, sleep } from "../measure.ts";

const APPS = 8;
const BUILD_S = 2;
const LIMIT = 2;

interface Run {
  ok: number;
  seconds: number;
  peak: number;
  runs: number;
  /**
   * The most `service_build_slots_in_use` (undefined: not exported, as with no limit), apps running and apps waiting
   * for a slot, seen by the sampler.
   */
  inUse: number | undefined;
  running: number;
  waiting: number;
  samples: number;
}

async function measure(bench: Bench, limit: number): Promise<Run> {
  const file = join(bench.tmpRoot, `slots-${limit}.txt`);
  const script = `s=$(date +%s%N) && sleep ${BUILD_S} && echo "$s $(date +%s%N)" >> ${file}`;
  const apps = Array.from({ length: APPS }, (_, i) => ({
    name: `app-${i + 1}`,
    host: `app-${i + 1}.example.com`,
    path: "/hook",
    repoPath: bench.repo(`slots-${i + 1}`),
    runScript: script,
    secret: SECRET,
  }));
  const adminPort = await freePort();
  const server = await bench.startServiceWith(
    { "service.yaml": stringify({ maxConcurrentDeploys: limit, adminPort, apps }) },
    {},
  );
  try {
    // The admin listener comes up after the webhook port; its first /metrics is not timed with the deploys.
    await waitForListen(adminPort, 10_000, () => server.proc.exitCode === null);
    await metrics(adminPort);
    let running = true;
    const seen = { inUse: undefined as number | undefined, running: 0, waiting: 0, samples: 0 };
    const count = (m: Map<string, number>, family: string) =>
      [...m].filter(([k, v]) => k.startsWith(`${family}{`) && v > 0).length;
    const sampler = (async () => {
      while (running) {
        const m = await metrics(adminPort).catch(() => undefined);
        if (m) {
          seen.samples++;
          const inUse = m.get("service_build_slots_in_use");
          if (inUse !== undefined) seen.inUse = Math.max(seen.inUse ?? 0, inUse);
          seen.running = Math.max(seen.running, count(m, "service_deploys_running"));
          seen.waiting = Math.max(seen.waiting, count(m, "service_deploys_waiting_for_slot"));
        }
        await sleep(100);
      }
    })();
    const t0 = performance.now();
    const results = await bounded(
      Promise.all(
        apps.map((app) => deploy(`http://127.0.0.1:${server.port}/hook`, { host: app.host }).catch(() => undefined)),
      ),
      60_000,
      `${APPS} deploys under maxConcurrentDeploys ${limit}`,
    );
    const seconds = (performance.now() - t0) / 1000;
    running = false;
    await sampler;
    return { ok: results.filter((r) => r?.ok).length, seconds, ...peakConcurrency(file), ...seen };
  } finally {
    await server.stop();
  }
}

async function slots(bench: Bench): Promise<void> {
  log(`slots: ${APPS} apps pushed at once, a ${BUILD_S} s build, maxConcurrentDeploys ${LIMIT} and 0`);
  const limited = await measure(bench, LIMIT);
  const open = await measure(bench, 0);
  const rounds = Math.ceil(APPS / LIMIT);
  const ideal = rounds * BUILD_S;
  bench.report.row(
    `slots: scripts running at once (${APPS} apps, maxConcurrentDeploys ${LIMIT})`,
    `≤ ${LIMIT}`,
    `${limited.peak} (${limited.runs} runs)`,
    `no limit: ${open.peak} (${open.runs} runs)`,
    "",
    limited.peak <= LIMIT && limited.runs === APPS,
  );
  bench.report.row(
    `slots: deploys ending \`[done] ok=true\` (maxConcurrentDeploys ${LIMIT})`,
    `${APPS}/${APPS}`,
    `${limited.ok}/${APPS}`,
    `no limit: ${open.ok}/${APPS}`,
    "",
    limited.ok === APPS,
  );
  bench.report.row(
    `slots: wall time of the ${APPS} deploys (${BUILD_S} s builds, maxConcurrentDeploys ${LIMIT})`,
    `≈ ${rounds} × ${BUILD_S} s (≤ ${(ideal * 1.1).toFixed(1)} s)`,
    `${limited.seconds.toFixed(2)} s`,
    `no limit: ${open.seconds.toFixed(2)} s`,
    "",
    limited.seconds <= ideal * 1.1,
  );
  bench.report.note(
    `slots: /metrics every 100 ms (${limited.samples} samples with the limit, ${open.samples} without), the most seen at once: with maxConcurrentDeploys ${LIMIT} ${limited.running} apps deploying, ${limited.inUse ?? "no"} slots in use (service_build_slots_in_use), ${limited.waiting} apps waiting for a slot (service_deploys_waiting_for_slot); with 0 ${open.running} apps deploying, ${open.inUse === undefined ? "no service_build_slots_in_use (not exported without a limit)" : `${open.inUse} slots in use`}, ${open.waiting} waiting`,
  );
}

export default { name: "slots", run: slots } satisfies Case;
