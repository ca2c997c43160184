/**
 * Deploy latency: sequential deploys of an up-to-date repository with run script `true`, the service,
 * adnanh/webhook and a bare `git pull && true` interleaved.
 */
import { bareDeploy, interleaved, timedDeploy } from "../drive.ts";
import { type Bench, type Case, post } from "../lab.ts";
import { doneRecords, fmtMs, fmtX, log, median } from "../measure.ts";

export const LATENCY_RUNS = 50;
const WARM_UP = 3;

export const p90 = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length * 0.9)] ?? NaN;

async function latency(bench: Bench, repo: string): Promise<void> {
  const { hasWebhook } = bench;
  log(`deploy latency: ${LATENCY_RUNS} sequential deploys each (service, webhook, bare sh), interleaved`);
  const server = await bench.startService(repo, "true");
  const webhook = hasWebhook ? await bench.startWebhook(repo, [{ id: "true", script: "true" }]) : undefined;
  try {
    const webhookDeploy = async () => {
      const t0 = performance.now();
      const response = await post(`${webhook!.url}true`);
      const text = await response.text();
      if (response.status !== 200) throw new Error(`webhook answered ${response.status}: ${text}`);
      return performance.now() - t0;
    };
    const t = await interleaved(LATENCY_RUNS, WARM_UP, {
      service: () => timedDeploy(server.url),
      webhook: webhook ? webhookDeploy : async () => NaN,
      bare: () => bareDeploy(bench, repo),
    });
    const [o, w, b] = [t.service.p50, t.webhook.p50, t.bare.p50];
    bench.report.row(
      "deploy p50 vs bare `git pull && true` (script true, up to date)",
      "≤ bare + 3 ms",
      fmtMs(o),
      `bare ${fmtMs(b)} (+${fmtMs(o - b)})`,
      fmtX(o / b),
      o <= b + 3,
    );
    bench.report.row(
      "deploy p50 vs adnanh/webhook (same runs)",
      "≤ adnanh/webhook's",
      fmtMs(o),
      webhook ? `${fmtMs(w)} (bare +${fmtMs(w - b)})` : "n/a",
      webhook ? fmtX(o / w) : "n/a",
      webhook ? o <= w : undefined,
    );
    const durations = doneRecords(server.cwd).map((r) => r.durationMs);
    bench.report.note(
      `deploy latency: the service's own durationMs (JSON log: from its start to [done]) has median ${fmtMs(median(durations))}; p90: service ${fmtMs(p90(t.service.all))}, webhook ${webhook ? fmtMs(p90(t.webhook.all)) : "n/a"}, bare ${fmtMs(p90(t.bare.all))}`,
    );
  } finally {
    await server.stop();
    await webhook?.stop();
  }
}

export default { name: "latency", run: (bench) => latency(bench, bench.repo("repo")) } satisfies Case;
