/**
 * Unauthorized POSTs per second from one address: wrk against the service, adnanh/webhook, a bare Bun.serve
 * answering the same 401 (the most any Bun handler gets here), and that bare Bun.serve behind the port's
 * connection relay (runtime/bun.ts: the floor of any handler behind it), rounds alternating.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, ROOT } from "../../../test/_support/repo.ts";
import { alternating, WRK_SECONDS, wrongSecretRate } from "../drive.ts";
import { type Bench, type Case, freePort, post, waitForListen, WRONG } from "../lab.ts";
import { fmtX, log } from "../measure.ts";

const ROUNDS = 3;

const BODY = `${JSON.stringify({ error: "unauthorized", message: "missing or wrong secret" })}\n`;
const ANSWER = `() => new Response(${JSON.stringify(BODY)}, { status: 401, headers: { "content-type": "application/json; charset=utf-8" } })`;

/** A Bun script listening on `port` and answering every request 401 at once: bare, or behind the relay. */
function referenceScript(port: number, relayed: boolean): string {
  if (!relayed)
    return `Bun.serve({ port: ${port}, hostname: "127.0.0.1", development: false, reusePort: false, fetch: ${ANSWER} });\n`;
  return (
    `import { runtime } from ${JSON.stringify(join(ROOT, "src/runtime/bun.ts"))};\n` +
    `await runtime.serve({ port: ${port}, hostname: "127.0.0.1", bounded: true, idleTimeoutSeconds: 30, maxRequestBodySize: 1e9, fetch: ${ANSWER}, error: ${ANSWER} });\n`
  );
}

async function startReference(bench: Bench, relayed: boolean): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const file = join(bench.tmpRoot, `bun-401${relayed ? "-relayed" : ""}.ts`);
  writeFileSync(file, referenceScript(port, relayed));
  const proc = Bun.spawn([process.execPath, file], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
    env: baseEnv(),
  });
  bench.track(proc);
  await waitForListen(port, 10_000, () => proc.exitCode === null);
  return { url: `http://127.0.0.1:${port}/`, stop: () => bench.stopProcess(proc) };
}

async function unauthorized(bench: Bench, repo: string): Promise<void> {
  const { hasWebhook, hasWrk } = bench;
  const figure = `unauthorized POSTs/s vs a bare Bun.serve 401 (wrk -c32, ${WRK_SECONDS} s, median of ${ROUNDS})`;
  if (!hasWrk || !hasWebhook) {
    const missing = [!hasWrk && "wrk", !hasWebhook && "webhook"].filter(Boolean).join(" and ");
    bench.report.na(figure, "≥ 80 % of bare Bun.serve", `needs ${missing}`);
    return;
  }
  log("unauthorized POSTs/s: wrk against the service, webhook, a bare Bun.serve and the bare one behind the relay");
  const server = await bench.startService(repo, "true");
  const webhook = await bench.startWebhook(repo, [{ id: "true", script: "true" }]);
  const bare = await startReference(bench, false);
  const relayed = await startReference(bench, true);
  try {
    for (const [url, name] of [
      [server.url, "service"],
      [`${webhook.url}true`, "webhook"],
    ] as const) {
      const response = await post(url, WRONG);
      await response.arrayBuffer();
      if (response.status !== 401) throw new Error(`${name} answered ${response.status} to a wrong secret`);
    }
    const errors: string[] = [];
    const rate = (url: string, name: string) => async () => {
      const run = await wrongSecretRate(bench, url);
      if (run.errors) errors.push(`wrk against ${name}: ${run.errors}`);
      return run.rps;
    };
    const r = await alternating(ROUNDS, {
      service: rate(server.url, "the service"),
      webhook: rate(`${webhook.url}true`, "webhook"),
      bare: rate(bare.url, "the bare Bun.serve"),
      relayed: rate(relayed.url, "the relayed Bun.serve"),
    });
    for (const error of errors) bench.report.note(error);
    const per = (values: number[]) => values.map((v) => v.toFixed(0)).join(", ");
    bench.report.row(
      figure,
      "≥ 80 % of bare Bun.serve",
      `${r.service.median.toFixed(0)}/s`,
      `bare Bun.serve ${r.bare.median.toFixed(0)}/s`,
      `${((100 * r.service.median) / r.bare.median).toFixed(0)} %`,
      r.service.median >= 0.8 * r.bare.median,
    );
    bench.report.row(
      "unauthorized POSTs/s vs adnanh/webhook (same rounds)",
      "≥ 1.6× adnanh/webhook",
      `${r.service.median.toFixed(0)}/s`,
      `${r.webhook.median.toFixed(0)}/s`,
      fmtX(r.service.median / r.webhook.median),
      r.service.median >= 1.6 * r.webhook.median,
    );
    bench.report.row(
      "the relay's floor: a bare Bun.serve 401 behind the port's connection relay",
      "(info)",
      `${r.relayed.median.toFixed(0)}/s`,
      `bare Bun.serve ${r.bare.median.toFixed(0)}/s`,
      `${((100 * r.relayed.median) / r.bare.median).toFixed(0)} %`,
      undefined,
    );
    bench.report.note(
      `unauthorized POSTs/s per round: service ${per(r.service.all)}; webhook ${per(r.webhook.all)}; bare Bun.serve ${per(r.bare.all)}; bare Bun.serve behind the relay ${per(r.relayed.all)}; bare Bun.serve is ${fmtX(r.bare.median / r.webhook.median)} adnanh/webhook here`,
    );
    const after = await post(server.url, WRONG);
    await after.arrayBuffer();
    bench.report.note(
      `unauthorized POSTs/s: all from 127.0.0.1, so past the failed-authentication burst the service answers 429 (the backoff), webhook 401; after the flood a wrong secret gets ${after.status}`,
    );
  } finally {
    await server.stop();
    await webhook.stop();
    await bare.stop();
    await relayed.stop();
  }
}

export default { name: "unauthorized", run: (bench) => unauthorized(bench, bench.repo("repo")) } satisfies Case;
