/**
 * Many clients without the secret sending large signed bodies, and an authorized deploy in the middle of them.
 */
import { connect } from "node:net";
import { lastLine } from "../../../test/_support/repo.ts";
import { type Bench, type Case, post } from "../lab.ts";
import { bounded, fmtMB, fmtMs, log, MB, procStatus, rssSampler, sleep } from "../measure.ts";

const FLOOD_CLIENTS = 200;
const FLOOD_BODY_BYTES = 25 * MB;

/**
 * One client without the secret: a signed head (a wrong signature) and a FLOOD_BODY_BYTES body sent as fast as
 * the server takes it, stopping once the answer is in. Resolves with the status (0: closed without one).
 */
function signedFloodClient(port: number): Promise<number> {
  return new Promise((done) => {
    const socket = connect(port, "127.0.0.1");
    const piece = Buffer.alloc(256 * 1024, 0x7b);
    let received = "";
    let answered = false;
    let drained: (() => void) | undefined;
    const finish = () => {
      if (answered) return;
      answered = true;
      socket.destroy();
      drained?.();
      done(Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0));
    };
    socket.on("error", finish);
    socket.on("close", finish);
    socket.on("drain", () => drained?.());
    socket.on("data", (data: Buffer) => {
      received += data.toString("latin1");
      const head = received.indexOf("\r\n\r\n");
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(received)?.[1] ?? NaN);
      if (head >= 0 && received.length - head - 4 >= length) finish();
    });
    socket.on("connect", async () => {
      socket.write(
        `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Hub-Signature-256: sha256=${"0".repeat(64)}\r\nContent-Length: ${FLOOD_BODY_BYTES}\r\n\r\n`,
      );
      for (let sent = 0; sent < FLOOD_BODY_BYTES && !answered; sent += piece.length) {
        if (!socket.write(piece)) await new Promise<void>((resume) => (drained = resume));
      }
    });
  });
}

/** FLOOD_CLIENTS concurrent 25 MiB bodies with a wrong signature, and an authorized deploy in the middle of them. */
async function signedFlood(bench: Bench, repo: string): Promise<void> {
  log(
    `signed flood: ${FLOOD_CLIENTS} concurrent ${FLOOD_BODY_BYTES / MB} MiB bodies with a wrong signature, one authorized deploy during it`,
  );
  const server = await bench.startService(repo, "true");
  try {
    await sleep(1000);
    const idle = procStatus(server.pid)?.rss ?? NaN;
    const sampler = rssSampler(server.pid);
    const t0 = performance.now();
    let answered = 0;
    const statuses = new Map<number, number>();
    const attack = Promise.all(
      Array.from({ length: FLOOD_CLIENTS }, () =>
        signedFloodClient(server.port).then((status) => {
          answered++;
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }),
      ),
    );
    // The deploy is sent once the first attackers have their answers: the server is in the middle of the flood.
    for (let i = 0; i < 2000 && answered < 16; i++) await sleep(5);
    const deployStart = performance.now();
    const text = await bounded(
      post(server.url).then((r) => r.text()),
      60_000,
      "the deploy during the flood",
    );
    const deployMs = performance.now() - deployStart;
    const pendingAtDone = FLOOD_CLIENTS - answered;
    await bounded(attack, 150_000, "the signed flood");
    const seconds = (performance.now() - t0) / 1000;
    const { peak, hwm, split } = sampler.stop();
    const growth = Math.max(peak, hwm) - idle;
    const done = lastLine(text);
    bench.report.row(
      `signed flood: server peak RSS (${FLOOD_CLIENTS} × ${FLOOD_BODY_BYTES / MB} MiB, wrong signature)`,
      "≤ idle + 64 MB",
      `idle + ${fmtMB(growth)}`,
      "",
      "",
      growth <= 64 * MB,
    );
    bench.report.row(
      "signed flood: authorized deploy during it",
      "`[done] ok=true`",
      done.startsWith("[done] ok=true") ? "[done] ok=true" : done.slice(0, 40),
      "",
      "",
      done.startsWith("[done] ok=true"),
    );
    const counts = [...statuses]
      .sort((a, b) => a[0] - b[0])
      .map(([status, n]) => `${n} × ${status || "closed"}`)
      .join(", ");
    bench.report.note(
      `signed flood: ${counts} in ${seconds.toFixed(1)} s; idle ${fmtMB(idle)}, sampled peak ${fmtMB(peak)} (${split}), VmHWM ${fmtMB(hwm)}; ` +
        `the deploy took ${fmtMs(deployMs)} and ended with ${pendingAtDone} attackers still unanswered`,
    );
  } finally {
    await server.stop();
  }
}

export default { name: "signed flood", run: (bench) => signedFlood(bench, bench.repo("flood")) } satisfies Case;
