/**
 * A burst of concurrent authorized deploys on one repository: all end ok, none overlaps another, memory stays
 * flat; adnanh/webhook runs them all at once.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { lastLine } from "../../../test/_support/repo.ts";
import { type Bench, type Case, post } from "../lab.ts";
import { bounded, fmtMB, log, MB, procStatus, rssSampler, sleep } from "../measure.ts";

export const BURST = 200;

/** Start/end intervals written by the burst script, and how many runs overlap an earlier one. */
export function overlaps(file: string): { runs: number; overlapping: number } {
  const intervals = existsSync(file)
    ? readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(" ").map(Number) as [number, number])
        .sort((a, b) => a[0] - b[0])
    : [];
  let overlapping = 0;
  let lastEnd = -Infinity;
  for (const [start, end] of intervals) {
    if (start < lastEnd) overlapping++;
    lastEnd = Math.max(lastEnd, end);
  }
  return { runs: intervals.length, overlapping };
}

/** BURST concurrent authorized POSTs to `server`: how long they took, the server's memory, and how many ended ok. */
export async function concurrentDeploys(server: { pid: number; url: string }, what: string) {
  await sleep(300);
  const before = procStatus(server.pid)?.rss ?? NaN;
  const sampler = rssSampler(server.pid);
  const t0 = performance.now();
  const texts = await bounded(
    Promise.all(
      Array.from({ length: BURST }, () =>
        post(server.url)
          .then((r) => r.text())
          .catch((e: Error) => `fetch failed: ${e.message}`),
      ),
    ),
    150_000,
    what,
  );
  const seconds = (performance.now() - t0) / 1000;
  const ok = texts.filter((text) => lastLine(text).startsWith("[done] ok=true")).length;
  return { before, seconds, ok, ...sampler.stop() };
}

/** BURST concurrent authorized POSTs on one repo; the script records its start and end. */
async function burst(bench: Bench, repo: string): Promise<void> {
  const { hasWebhook } = bench;
  log(`burst: ${BURST} concurrent deploys on one repo`);
  const script = (file: string) => `s=$(date +%s%N) && sleep 0.01 && echo "$s $(date +%s%N)" >> ${file}`;
  const ourFile = join(bench.tmpRoot, "burst-service.txt");
  const theirFile = join(bench.tmpRoot, "burst-webhook.txt");
  const server = await bench.startService(repo, script(ourFile), { SERVICE_QUEUE_LIMIT: "250" });
  try {
    const { before, seconds, peak, hwm, split, ok } = await concurrentDeploys(server, "the burst");
    const ours = overlaps(ourFile);
    bench.report.note(
      `burst: service took ${seconds.toFixed(1)} s for ${BURST} deploys (${((seconds * 1000) / BURST).toFixed(1)} ms each, one at a time); RSS ${fmtMB(before)} before, sampled peak ${fmtMB(peak)} (${split}), VmHWM ${fmtMB(hwm)}`,
    );
    let theirs: { runs: number; overlapping: number; ok: number; seconds: number } | undefined;
    if (hasWebhook) {
      const webhook = await bench.startWebhook(repo, [{ id: "burst", script: script(theirFile) }]);
      try {
        const t1 = performance.now();
        const statuses = await bounded(
          Promise.all(
            Array.from({ length: BURST }, () =>
              post(`${webhook.url}burst`)
                .then(async (r) => ({ status: r.status, text: await r.text() }))
                .catch((e: Error) => ({ status: 0, text: e.message })),
            ),
          ),
          150_000,
          "the webhook burst",
        );
        theirs = {
          ...overlaps(theirFile),
          ok: statuses.filter((r) => r.status === 200).length,
          seconds: (performance.now() - t1) / 1000,
        };
        // Why the others failed: the most common last line of their output.
        const reasons = new Map<string, number>();
        for (const r of statuses.filter((r) => r.status !== 200)) {
          const reason = `${r.status}: ${lastLine(r.text).slice(0, 100)}`;
          reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
        }
        const [topReason, topCount] = [...reasons].sort((a, b) => b[1] - a[1])[0] ?? ["", 0];
        bench.report.note(
          `burst: adnanh/webhook ran all ${BURST} at once in ${theirs.seconds.toFixed(1)} s: ${theirs.ok}/${BURST} answered 200` +
            (topCount
              ? ` (of the others ${topCount} said "${topReason}": the concurrent git pulls trip over each other)`
              : "") +
            `; ${theirs.runs} scripts ran, ${theirs.overlapping} of them overlapping another`,
        );
      } finally {
        await webhook.stop();
      }
    }
    bench.report.row(
      "burst: deploys ending `[done] ok=true`",
      `${BURST}/${BURST}`,
      `${ok}/${BURST}`,
      theirs ? `${theirs.ok}/${BURST} (HTTP 200)` : "n/a",
      "",
      ok === BURST,
    );
    bench.report.row(
      "burst: overlapping runs",
      "0",
      `${ours.overlapping} of ${ours.runs}`,
      theirs ? `${theirs.overlapping} of ${theirs.runs}` : "n/a",
      "",
      ours.overlapping === 0 && ours.runs === BURST,
    );
    const growth = Math.max(peak, hwm) - before;
    bench.report.row("burst: server RSS growth (peak − before)", "≤ 30 MB", fmtMB(growth), "", "", growth <= 30 * MB);
  } finally {
    await server.stop();
  }
}

export default { name: "burst", run: (bench) => burst(bench, bench.repo("burst")) } satisfies Case;
