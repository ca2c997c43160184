/**
 * Unauthorized POSTs per second from one address: wrk against the service and adnanh/webhook, and a bare
 * Bun.serve for reference.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv } from "../../../test/_support/repo.ts";
import { type Bench, type Case, freePort, post, waitForListen, WRONG } from "../lab.ts";
import { fmtX, log, median } from "../measure.ts";

const WRK_SECONDS = 5;
const WRK_ROUNDS = 2;

/**
 * wrk, 32 connections, wrong secret; WRK_ROUNDS rounds each, alternating. All from 127.0.0.1: past the
 * service's failed-authentication burst its answers are 429 (the backoff), so the figure is the cost of
 * refusing a flood from one address; webhook answers every one 401.
 */
async function unauthorized(bench: Bench, repo: string): Promise<void> {
  const { hasWebhook, hasWrk } = bench;
  const figure = `unauthorized POSTs/s, one address (wrk -c32, ${WRK_SECONDS} s, median of ${WRK_ROUNDS}; service: 429 past the burst)`;
  if (!hasWrk || !hasWebhook) {
    bench.report.na(
      figure,
      "≥ 2× adnanh/webhook",
      `needs ${[!hasWrk && "wrk", !hasWebhook && "webhook"].filter(Boolean).join(" and ")}`,
    );
    return;
  }
  log("unauthorized POSTs/s: wrk against each, alternating");
  const script = join(bench.tmpRoot, "wrong-secret.lua");
  writeFileSync(script, `wrk.method = "POST"\nwrk.headers["X-Service-Secret"] = "${WRONG}"\n`);
  const server = await bench.startService(repo, "true");
  const webhook = await bench.startWebhook(repo, [{ id: "true", script: "true" }]);
  try {
    for (const [url, name] of [
      [server.url, "service"],
      [`${webhook.url}true`, "webhook"],
    ] as const) {
      const response = await post(url, WRONG);
      await response.arrayBuffer();
      if (response.status !== 401) throw new Error(`${name} answered ${response.status} to a wrong secret`);
    }
    const wrk = async (url: string): Promise<{ rps: number; non2xx: number; errors: string }> => {
      const proc = Bun.spawn(["wrk", "-t2", "-c32", `-d${WRK_SECONDS}s`, "--timeout", "5s", "-s", script, url], {
        stdout: "pipe",
        stderr: "pipe",
        env: baseEnv(),
      });
      bench.track(proc);
      const timer = setTimeout(() => proc.kill("SIGKILL"), (WRK_SECONDS + 20) * 1000);
      const [out, , code] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ]);
      clearTimeout(timer);
      bench.untrack(proc);
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
      if (code !== 0 || !Number.isFinite(rps)) throw new Error(`wrk failed (${code}): ${out}`);
      const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
      const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
      if (non2xx < requests * 0.99)
        throw new Error(`wrk got ${requests - non2xx} of ${requests} answers that were not 401 or 429 from ${url}`);
      return { rps, non2xx, errors: /Socket errors:.*/.exec(out)?.[0] ?? "" };
    };
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let round = 0; round < WRK_ROUNDS; round++) {
      const a = await wrk(server.url);
      ours.push(a.rps);
      const b = await wrk(`${webhook.url}true`);
      theirs.push(b.rps);
      for (const [name, r] of [
        ["service", a],
        ["webhook", b],
      ] as const)
        if (r.errors) bench.report.note(`wrk against ${name}: ${r.errors}`);
    }
    const after = await post(server.url, WRONG);
    await after.arrayBuffer();
    bench.report.note(
      `unauthorized POSTs/s: after the flood the service answers a wrong secret from the same address ${after.status} (429 is the failed-authentication backoff)`,
    );
    // The ceiling of any Bun handler here: Bun.serve answering the same 401 body at once, no work at all.
    const reference = join(bench.tmpRoot, "bun-401.ts");
    const refPort = await freePort();
    writeFileSync(
      reference,
      `const body = ${JSON.stringify(`${JSON.stringify({ error: "unauthorized", message: "missing or wrong secret" })}\n`)};\n` +
        `Bun.serve({ port: ${refPort}, hostname: "127.0.0.1", development: false, fetch: () => new Response(body, { status: 401, headers: { "content-type": "application/json; charset=utf-8" } }) });\n`,
    );
    const refProc = Bun.spawn([process.execPath, reference], {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
      env: baseEnv(),
    });
    bench.track(refProc);
    try {
      await waitForListen(refPort, 10_000, () => refProc.exitCode === null);
      const ref = await wrk(`http://127.0.0.1:${refPort}/`);
      bench.report.note(
        `unauthorized POSTs/s reference: a bare Bun.serve answering 401 at once (no routing, no config, no secret check) does ${ref.rps.toFixed(0)}/s here, ${(ref.rps / median(theirs)).toFixed(2)}× adnanh/webhook: the most any Bun handler gets with wrk on the same cores`,
      );
    } finally {
      await bench.stopProcess(refProc);
    }
    const o = median(ours);
    const t = median(theirs);
    bench.report.note(
      `unauthorized POSTs/s per round: service ${ours.map((v) => v.toFixed(0)).join(", ")}; webhook ${theirs.map((v) => v.toFixed(0)).join(", ")}`,
    );
    bench.report.row(figure, "≥ 2× adnanh/webhook", `${o.toFixed(0)}/s`, `${t.toFixed(0)}/s`, fmtX(o / t), o >= 2 * t);
  } finally {
    await server.stop();
    await webhook.stop();
  }
}

export default { name: "unauthorized", run: (bench) => unauthorized(bench, bench.repo("repo")) } satisfies Case;
