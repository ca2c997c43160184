/**
 * 100 MB of deploy output: a fast client (throughput beside a bare `… | cat` pipe, then adnanh/webhook for
 * information), then a client that reads nothing until the deploy is over (slow-client.ts).
 */
import { baseEnv, lastLine } from "../../../test/_support/repo.ts";
import { type Bench, type Case, post, SECRET } from "../lab.ts";
import { bounded, doneRecords, fmtMB, fmtMs, log, MB, median, procStatus, rssSampler, which } from "../measure.ts";
import { slowClient } from "./slow-client.ts";
import { GENERATOR, STREAM_BYTES, STREAM_RUNS } from "./stream-output.ts";

/** Counts a byte stream; notes when the `[run] $` line went by (the start of the script's output). */
async function countStream(
  stream: ReadableStream<Uint8Array>,
  t0: number,
): Promise<{ bytes: number; runMs: number; totalMs: number; tail: string; skipped: boolean }> {
  let bytes = 0;
  let runAt = NaN;
  let head = "";
  let tail = "";
  for await (const value of stream) {
    bytes += value.length;
    if (Number.isNaN(runAt)) {
      head += Buffer.from(value).toString("latin1");
      if (head.includes("[run] $")) runAt = performance.now();
    }
    tail = (tail + Buffer.from(value.subarray(Math.max(0, value.length - 4096))).toString("latin1")).slice(-8192);
  }
  const end = performance.now();
  return { bytes, runMs: end - runAt, totalMs: end - t0, tail, skipped: tail.includes("[stream] skipped") };
}

/**
 * Reads a streamed deploy as a fast client: curl (what the README uses) writing into a pipe that this process
 * reads, exactly as it reads the bare `… | cat` pipe; without curl, fetch. The throughput window runs from the
 * `[run] $` line to the end of the response.
 */
async function readStream(
  bench: Bench,
  url: string,
): Promise<{ bytes: number; runMs: number; totalMs: number; tail: string; skipped: boolean }> {
  const t0 = performance.now();
  if (!which("curl")) return countStream((await post(url)).body!, t0);
  const proc = Bun.spawn(["curl", "-sS", "-N", "-X", "POST", "-H", `X-Service-Secret: ${SECRET}`, url], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  bench.track(proc);
  try {
    const result = await countStream(proc.stdout, t0);
    if ((await proc.exited) !== 0) throw new Error(`curl failed: ${await new Response(proc.stderr).text()}`);
    return result;
  } finally {
    bench.untrack(proc);
  }
}

/** The fast client's deploys; returns their durationMs (JSON log), the slow client's baseline. */
async function fastClient(bench: Bench, repo: string): Promise<number[]> {
  log(
    `stream throughput: ${STREAM_RUNS} × ${STREAM_BYTES / MB} MB through the service and through a bare pipe, interleaved`,
  );
  const server = await bench.startService(repo, GENERATOR);
  try {
    const before = procStatus(server.pid)?.rss ?? NaN;
    const sampler = rssSampler(server.pid);
    const ours: number[] = [];
    const bare: number[] = [];
    let skipped = false;
    for (let i = 0; i < STREAM_RUNS; i++) {
      const r = await bounded(readStream(bench, server.url), 60_000, "a 100 MB deploy");
      if (!lastLine(r.tail).startsWith("[done] ok=true"))
        throw new Error(`the 100 MB deploy did not end ok: ${r.tail.slice(-300)}`);
      if (r.bytes < STREAM_BYTES) skipped = true;
      skipped ||= r.skipped;
      // What the client received of the script's output (a [stream] skipped mark means some was not sent).
      ours.push(Math.min(r.bytes, STREAM_BYTES) / MB / (r.runMs / 1000));
      const t0 = performance.now();
      const proc = Bun.spawn(["sh", "-c", `${GENERATOR} | cat`], {
        cwd: repo,
        env: baseEnv(),
        stdin: "ignore",
        stdout: "pipe",
        stderr: "ignore",
      });
      bench.track(proc);
      let bytes = 0;
      await bounded(
        (async () => {
          for await (const chunk of proc.stdout) bytes += chunk.length;
          await proc.exited;
        })(),
        60_000,
        "a bare 100 MB pipe",
      );
      bench.untrack(proc);
      if (bytes !== STREAM_BYTES) throw new Error(`the bare pipe gave ${bytes} bytes`);
      bare.push(STREAM_BYTES / MB / ((performance.now() - t0) / 1000));
    }
    const { peak, hwm, split } = sampler.stop();
    bench.report.note(
      `stream: server RSS ${fmtMB(before)} before, sampled peak ${fmtMB(peak)} (${split}), VmHWM ${fmtMB(hwm)}`,
    );
    const fastDurations = doneRecords(server.cwd).map((r) => r.durationMs);
    const o = median(ours);
    const b = median(bare);
    bench.report.note(
      `stream throughput per run (MB/s): service ${ours.map((v) => v.toFixed(0)).join(", ")}; bare pipe ${bare.map((v) => v.toFixed(0)).join(", ")}${skipped ? "; the fast client fell more than 4 MiB behind at times and was sent a [stream] skipped mark (the throughput counts only what it received)" : ""}`,
    );
    bench.report.note(`stream: deploy durationMs (JSON log) ${fastDurations.join(", ")}`);
    bench.report.row(
      `stream throughput (100 MB, ${which("curl") ? "curl" : "fetch"} receives)`,
      "≥ 50 % of bare `… | cat`",
      `${o.toFixed(0)} MB/s`,
      `${b.toFixed(0)} MB/s`,
      `${((o / b) * 100).toFixed(0)} %`,
      o >= 0.5 * b,
    );
    const p = Math.max(peak, hwm);
    bench.report.row("stream: server peak RSS", "≤ 80 MB", fmtMB(p), "", "", p <= 80 * MB);
    return fastDurations;
  } finally {
    await server.stop();
  }
}

/** For information: adnanh/webhook buffers the whole output and sends it at the end. */
async function webhookStream(bench: Bench, repo: string): Promise<void> {
  // For information: adnanh/webhook buffers the whole output and sends it at the end.
  const webhook = await bench.startWebhook(repo, [{ id: "stream", script: GENERATOR }]);
  try {
    const sampler = rssSampler(webhook.pid);
    const t0 = performance.now();
    const response = await bounded(post(`${webhook.url}stream`), 60_000, "the webhook 100 MB deploy");
    const body = await bounded(response.arrayBuffer(), 60_000, "the webhook 100 MB body");
    const ms = performance.now() - t0;
    const { peak, hwm } = sampler.stop();
    bench.report.note(
      `stream: adnanh/webhook (buffers the whole output, sends it at the end): ${(body.byteLength / MB).toFixed(0)} MB in ${fmtMs(ms)} end to end (${(body.byteLength / MB / (ms / 1000)).toFixed(0)} MB/s, first byte after the script ended), peak RSS ${fmtMB(Math.max(peak, hwm))}`,
    );
  } finally {
    await webhook.stop();
  }
}

async function stream(bench: Bench, repo: string): Promise<void> {
  const fastDurations = await fastClient(bench, repo);
  if (bench.hasWebhook) await webhookStream(bench, repo);
  await slowClient(bench, repo, fastDurations);
}

export default { name: "stream", run: (bench) => stream(bench, bench.repo("stream")) } satisfies Case;
