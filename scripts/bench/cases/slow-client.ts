/**
 * The slow client of the stream case: deploys of 100 MB of output to a client that reads nothing until the
 * deploy is over; the deploy takes no longer than for a fast client, memory stays bounded, the logs complete.
 */
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { type Bench, SECRET } from "../lab.ts";
import {
  bounded,
  doneRecords,
  fmtMB,
  fmtMs,
  fmtX,
  log,
  MB,
  median,
  procStatus,
  rssSampler,
  sleep,
} from "../measure.ts";
import { GENERATOR, STREAM_BYTES, STREAM_RUNS } from "./stream-output.ts";

/** `fastDurations`: the durationMs of the same deploys to a fast client. */
export async function slowClient(bench: Bench, repo: string, fastDurations: number[]): Promise<void> {
  log(
    `slow client: ${STREAM_RUNS} deploys of ${STREAM_BYTES / MB} MB to a client that reads only after the deploy is over`,
  );
  const slowServer = await bench.startService(repo, GENERATOR);
  try {
    const slowBefore = procStatus(slowServer.pid)?.rss ?? NaN;
    const sampler = rssSampler(slowServer.pid);
    const durations: number[] = [];
    const received: number[] = [];
    let complete = true;
    let logBytes = 0;
    let truncatedMark = true;
    let skippedMark = true;
    for (let i = 0; i < STREAM_RUNS; i++) {
      const before = doneRecords(slowServer.cwd).length;
      const socket: Socket = connect(slowServer.port, "127.0.0.1");
      socket.on("error", () => {});
      try {
        await bounded(
          new Promise<void>((done) => socket.once("connect", () => done())),
          5000,
          "the slow client's connect",
        );
        socket.pause();
        socket.write(
          `POST / HTTP/1.1\r\nHost: 127.0.0.1:${slowServer.port}\r\nX-Service-Secret: ${SECRET}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
        );
        const record = await bounded(
          (async () => {
            for (;;) {
              const records = doneRecords(slowServer.cwd);
              if (records.length > before) return records[records.length - 1]!;
              await sleep(20);
            }
          })(),
          60_000,
          "the slow client's deploy",
        );
        durations.push(record.durationMs);
        complete &&= record.status === "done" && record.result.ok;
        const logText = readFileSync(record.logFile, "latin1");
        logBytes = Math.max(logBytes, logText.length);
        complete &&= logText.trimEnd().endsWith("[done] ok=true exitCode=0");
        truncatedMark &&= logText.includes("[log] truncated");
        // Now read everything.
        let bytes = 0;
        let tail = "";
        await bounded(
          new Promise<void>((done) => {
            socket.on("data", (chunk: Buffer) => {
              bytes += chunk.length;
              tail = (tail + chunk.subarray(Math.max(0, chunk.length - 4096)).toString("latin1")).slice(-8192);
            });
            socket.on("close", () => done());
            socket.resume();
          }),
          30_000,
          "reading the slow client's response",
        );
        received.push(bytes);
        skippedMark &&= tail.includes("[stream] skipped") || bytes < STREAM_BYTES;
        complete &&= /\[done\] ok=true exitCode=0\n/.test(tail);
      } finally {
        socket.destroy();
      }
    }
    const { peak, hwm, split } = sampler.stop();
    bench.report.note(
      `slow client: server RSS ${fmtMB(slowBefore)} before, sampled peak ${fmtMB(peak)} (${split}), VmHWM ${fmtMB(hwm)}`,
    );
    const slow = median(durations);
    const fast = median(fastDurations);
    bench.report.note(
      `slow client: deploy durationMs ${durations.join(", ")} (fast client ${fastDurations.join(", ")}); received ${received.map((b) => fmtMB(b)).join(", ")} of ${fmtMB(STREAM_BYTES)} output (the rest skipped with a [stream] skipped mark: ${skippedMark ? "yes" : "no"})`,
    );
    bench.report.note(
      `slow client: the .log holds ${fmtMB(logBytes)}: maxLogBytes (default 10 MiB) caps its output${truncatedMark ? ", with a [log] truncated mark" : ""}; the .json says done with the whole result`,
    );
    bench.report.row(
      "slow client: deploy time vs fast client (durationMs)",
      "≤ 1.2×",
      fmtMs(slow),
      `${fmtMs(fast)} (fast client)`,
      fmtX(slow / fast),
      slow <= 1.2 * fast,
    );
    const p = Math.max(peak, hwm);
    bench.report.row("slow client: server peak RSS", "≤ 80 MB", fmtMB(p), "", "", p <= 80 * MB);
    bench.report.row(
      "slow client: logs complete (.json done, .log ends with [done])",
      "yes",
      complete ? "yes" : "no",
      "",
      "",
      complete,
    );
  } finally {
    await slowServer.stop();
  }
}
