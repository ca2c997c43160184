/**
 * The loads the cases drive: wrk's refused POSTs per second, and sequential deploys timed from the request to the
 * last byte of the answer (several runners interleaved, so a busy moment of the machine hits them alike).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, lastLine } from "../../test/_support/repo.ts";
import { type Bench, post, SECRET, WRONG } from "./lab.ts";
import { bounded, median, sleep } from "./measure.ts";

export const WRK_SECONDS = 5;

export interface WrkRun {
  rps: number;
  errors: string;
}

/**
 * `wrk -t2 -c32` for WRK_SECONDS against `url` with a wrong X-Service-Secret (and `host` as the Host header when
 * given); throws unless 99 % of the answers were refusals (401 or 429).
 */
export async function wrongSecretRate(bench: Bench, url: string, host?: string): Promise<WrkRun> {
  const script = join(bench.tmpRoot, `wrong-secret-${host ?? "any"}.lua`);
  writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.headers["X-Service-Secret"] = "${WRONG}"\n${host ? `wrk.headers["Host"] = "${host}"\n` : ""}`,
  );
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
  const refused = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  if (refused < requests * 0.99)
    throw new Error(`wrk got ${requests - refused} of ${requests} answers that were not 401 or 429 from ${url}`);
  return { rps, errors: /Socket errors:.*/.exec(out)?.[0] ?? "" };
}

/** Runs each of `runners` `rounds` times, alternating: the medians and every value, by runner. */
export async function alternating<K extends string>(
  rounds: number,
  runners: Record<K, () => Promise<number>>,
): Promise<Record<K, { median: number; all: number[] }>> {
  const all = Object.fromEntries(Object.keys(runners).map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < rounds; round++)
    for (const key of Object.keys(runners) as K[]) all[key].push(await runners[key]());
  return Object.fromEntries(
    (Object.keys(all) as K[]).map((k) => [k, { median: median(all[k]), all: all[k] }]),
  ) as Record<K, { median: number; all: number[] }>;
}

/** One authorized deploy through the service (optionally as `host`): ms from the request to the answer's end. */
export async function timedDeploy(url: string, options: { host?: string; secret?: string } = {}): Promise<number> {
  const t0 = performance.now();
  const response = await bounded(
    options.host
      ? fetch(url, { method: "POST", headers: { host: options.host, "x-service-secret": options.secret ?? SECRET } })
      : post(url, options.secret ?? SECRET),
    30_000,
    "a deploy",
  );
  const text = await response.text();
  const ms = performance.now() - t0;
  if (!lastLine(text).startsWith("[done] ok=true")) throw new Error(`a deploy did not end ok:\n${text}`);
  return ms;
}

/** `sh -c 'git pull && true'` in `repo`: the bare commands a deploy of script `true` runs, in ms. */
export async function bareDeploy(bench: Bench, repo: string): Promise<number> {
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
}

/**
 * Sequential runs of each runner, interleaved (`warmUp` rounds first, not counted): the p50 of each, and every
 * value (for p90s and notes). `gapMs` between two runs lets what a server does after a deploy's answer (its
 * retention) end before another server's deploy is timed.
 */
export async function interleaved<K extends string>(
  runs: number,
  warmUp: number,
  runners: Record<K, () => Promise<number>>,
  gapMs = 0,
): Promise<Record<K, { p50: number; all: number[] }>> {
  const times = Object.fromEntries(Object.keys(runners).map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < runs + warmUp; i++)
    for (const key of Object.keys(runners) as K[]) {
      const ms = await runners[key]();
      if (i >= warmUp) times[key].push(ms);
      if (gapMs > 0) await sleep(gapMs);
    }
  return Object.fromEntries(
    (Object.keys(times) as K[]).map((k) => [k, { p50: median(times[k]), all: times[k] }]),
  ) as Record<K, { p50: number; all: number[] }>;
}
