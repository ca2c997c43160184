/**
 * Deploy latency: sequential deploys of an up-to-date repository, the service, adnanh/webhook and a bare
 * `git pull && true` interleaved.
 */
import { baseEnv, lastLine } from "../../../test/_support/repo.ts";
import { type Bench, type Case, post } from "../lab.ts";
import { bounded, doneRecords, fmtMs, fmtX, log, median } from "../measure.ts";

const LATENCY_RUNS = 50;

/** Sequential deploys of an up-to-date repo with run script `true`; the three runners interleaved. */
async function latency(bench: Bench, repo: string): Promise<void> {
  const { hasWebhook } = bench;
  log(`deploy latency: ${LATENCY_RUNS} sequential deploys each (service, webhook, bare sh), interleaved`);
  const server = await bench.startService(repo, "true");
  const webhook = hasWebhook ? await bench.startWebhook(repo, [{ id: "true", script: "true" }]) : undefined;
  try {
    const ours = async () => {
      const t0 = performance.now();
      const response = await post(server.url);
      const text = await response.text();
      const ms = performance.now() - t0;
      if (!lastLine(text).startsWith("[done] ok=true")) throw new Error(`a deploy did not end ok:\n${text}`);
      return ms;
    };
    const theirs = async () => {
      const t0 = performance.now();
      const response = await post(`${webhook!.url}true`);
      const text = await response.text();
      const ms = performance.now() - t0;
      if (response.status !== 200) throw new Error(`webhook answered ${response.status}: ${text}`);
      return ms;
    };
    const bare = async () => {
      const t0 = performance.now();
      const proc = Bun.spawn(["sh", "-c", "git pull && true"], {
        cwd: repo,
        env: baseEnv(),
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      bench.track(proc);
      const [, , code] = await Promise.all([
        new Response(proc.stdout).arrayBuffer(),
        new Response(proc.stderr).arrayBuffer(),
        proc.exited,
      ]);
      const ms = performance.now() - t0;
      bench.untrack(proc);
      if (code !== 0) throw new Error(`bare git pull && true exited ${code}`);
      return ms;
    };
    const times = { ours: [] as number[], theirs: [] as number[], bare: [] as number[] };
    for (let i = 0; i < LATENCY_RUNS + 3; i++) {
      const o = await bounded(ours(), 30_000, "a deploy");
      const t = webhook ? await bounded(theirs(), 30_000, "a webhook deploy") : NaN;
      const b = await bounded(bare(), 30_000, "a bare git pull");
      if (i < 3) continue; // warm-up
      times.ours.push(o);
      times.theirs.push(t);
      times.bare.push(b);
    }
    const o = median(times.ours);
    const t = webhook ? median(times.theirs) : NaN;
    const b = median(times.bare);
    bench.report.row(
      "deploy latency p50 vs adnanh/webhook",
      "≤ adnanh/webhook's",
      fmtMs(o),
      webhook ? fmtMs(t) : "n/a",
      webhook ? fmtX(o / t) : "n/a",
      webhook ? o <= t : undefined,
    );
    bench.report.row(
      "deploy latency p50 vs bare `git pull && true`",
      "≤ bare + 5 ms",
      fmtMs(o),
      `${fmtMs(b)} (+${fmtMs(o - b)})`,
      fmtX(o / b),
      o <= b + 5,
    );
    const durations = doneRecords(server.cwd).map((r) => r.durationMs);
    bench.report.note(
      `deploy latency: the service's own durationMs (JSON log: HEAD, pull, script, from start to [done]) has median ${fmtMs(median(durations))}; the rest of its ${fmtMs(o)} is HTTP, the per-POST config reload, the queue and the log files`,
    );
    const p90 = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length * 0.9)] ?? NaN;
    bench.report.note(
      `deploy latency p90: service ${fmtMs(p90(times.ours))}, webhook ${webhook ? fmtMs(p90(times.theirs)) : "n/a"}, bare ${fmtMs(p90(times.bare))}`,
    );
  } finally {
    await server.stop();
    await webhook?.stop();
  }
}

export default { name: "latency", run: (bench) => latency(bench, bench.repo("repo")) } satisfies Case;
