/**
 * Unauthorized POSTs per second from one address: wrk against the service (on loopback: not bounded, as behind a
 * proxy), adnanh/webhook, a bare Bun.serve answering the same 401 (the most any Bun handler gets here), a bare
 * Bun.serve doing only the checks a refusal needs (the floor of any handler that refuses as the service does),
 * and the bare Bun.serve behind the connection relay of a bounded port (runtime/bun.ts), rounds alternating.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, ROOT } from "../../../test/_support/repo.ts";
import { alternating, WRK_SECONDS, wrongSecretRate } from "../drive.ts";
import { type Bench, type Case, freePort, post, SECRET, waitForListen, WRONG } from "../lab.ts";
import { fmtX, log } from "../measure.ts";

const ROUNDS = 3;

const BODY = `${JSON.stringify({ error: "unauthorized", message: "missing or wrong secret" })}\n`;
const ANSWER = `() => new Response(${JSON.stringify(BODY)}, { status: 401, headers: { "content-type": "application/json; charset=utf-8" } })`;

/**
 * What any handler must do to refuse a wrong secret the way the service does: read the credential headers (the
 * secret, Content-Length, the five signature headers), compare a SHA-256 of the given secret with the expected
 * one in constant time, and learn the peer's address for the failure throttle (`server.requestIP`: one
 * getpeername system call per request under Bun), then answer 429.
 */
const CHECKS = `(request, server) => {
  const headers = request.headers;
  let seen = headers.get("content-length")?.length ?? 0;
  for (const name of ["x-hub-signature-256", "x-hub-signature", "x-gitea-signature", "x-forgejo-signature", "x-gogs-signature"])
    seen += headers.get(name)?.length ?? 0;
  const given = headers.get("x-service-secret") ?? headers.get("x-gitlab-token") ?? headers.get("authorization") ?? "";
  const ok = timingSafeEqual(hash("sha256", given, "buffer"), EXPECTED);
  seen += server.requestIP(request)?.address.length ?? 0;
  return new Response(ok ? "" : THROTTLED, ANSWER_429);
}`;

type Reference = "bare" | "relayed" | "checks";

/** A Bun script listening on `port`: a bare 401, that behind the relay, or the checks every refusal needs. */
function referenceScript(port: number, kind: Reference): string {
  if (kind === "bare")
    return `Bun.serve({ port: ${port}, hostname: "127.0.0.1", development: false, reusePort: false, fetch: ${ANSWER} });\n`;
  if (kind === "checks")
    return (
      `import { hash, timingSafeEqual } from "node:crypto";\n` +
      `const EXPECTED = hash("sha256", ${JSON.stringify(SECRET)}, "buffer");\n` +
      `const THROTTLED = ${JSON.stringify(`${JSON.stringify({ error: "too many failed authentications", message: "x".repeat(200) })}\n`)};\n` +
      `const ANSWER_429 = { status: 429, headers: new Headers({ "content-type": "application/json; charset=utf-8", "retry-after": "1" }) };\n` +
      `Bun.serve({ port: ${port}, hostname: "127.0.0.1", development: false, reusePort: false, fetch: ${CHECKS} });\n`
    );
  return (
    `import { runtime } from ${JSON.stringify(join(ROOT, "src/runtime/bun.ts"))};\n` +
    `await runtime.serve({ port: ${port}, hostname: "127.0.0.1", bounded: true, idleTimeoutSeconds: 30, maxRequestBodySize: 1e9, fetch: ${ANSWER}, error: ${ANSWER} });\n`
  );
}

async function startReference(bench: Bench, kind: Reference): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const file = join(bench.tmpRoot, `bun-401-${kind}.ts`);
  writeFileSync(file, referenceScript(port, kind));
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
  const bare = await startReference(bench, "bare");
  const relayed = await startReference(bench, "relayed");
  const checks = await startReference(bench, "checks");
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
      checks: rate(checks.url, "the Bun.serve doing a refusal's checks"),
    });
    for (const error of errors) bench.report.note(error);
    const per = (values: number[]) => values.map((v) => v.toFixed(0)).join(", ");
    /** A row of `rate` against the bare Bun.serve 401 of the same rounds. */
    const againstBare = (label: string, target: string, rate: number, pass: boolean | undefined) =>
      bench.report.row(
        label,
        target,
        `${rate.toFixed(0)}/s`,
        `bare Bun.serve ${r.bare.median.toFixed(0)}/s`,
        `${((100 * rate) / r.bare.median).toFixed(0)} %`,
        pass,
      );
    againstBare(figure, "≥ 80 % of bare Bun.serve", r.service.median, r.service.median >= 0.8 * r.bare.median);
    bench.report.row(
      "unauthorized POSTs/s vs adnanh/webhook (same rounds)",
      "≥ 1.6× adnanh/webhook",
      `${r.service.median.toFixed(0)}/s`,
      `${r.webhook.median.toFixed(0)}/s`,
      fmtX(r.service.median / r.webhook.median),
      r.service.median >= 1.6 * r.webhook.median,
    );
    againstBare(
      "the floor of a refusal: a bare Bun.serve reading the credentials, hashing the secret, asking the peer's address",
      "(info)",
      r.checks.median,
      undefined,
    );
    againstBare(
      "the relay's floor (a bounded port): a bare Bun.serve 401 behind the port's connection relay",
      "(info)",
      r.relayed.median,
      undefined,
    );
    bench.report.note(
      `unauthorized POSTs/s per round: service ${per(r.service.all)}; webhook ${per(r.webhook.all)}; bare Bun.serve ${per(r.bare.all)}; bare Bun.serve behind the relay ${per(r.relayed.all)}; the refusal's checks alone ${per(r.checks.all)}; the service listens on loopback (not bounded, as behind a proxy), bare Bun.serve is ${fmtX(r.bare.median / r.webhook.median)} adnanh/webhook here`,
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
    await checks.stop();
  }
}

export default { name: "unauthorized", run: (bench) => unauthorized(bench, bench.repo("repo")) } satisfies Case;
