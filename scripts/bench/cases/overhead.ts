/**
 * A deploy's every millisecond: sequential deploys of script `true` on an up-to-date clone, interleaved with the
 * bare `sh -c 'git pull && true'` and a bare `git pull` (no `sh`) on the same clone. Each deploy's answer is read
 * chunk by chunk, the arrival of each line that marks a step noted on the client's clock, and its record's start,
 * phases and end (the server's clock, whole ms) set beside them: from the request to the end of the answer, every
 * segment is accounted for, before the record starts, inside it by phase, and after `[done]`.
 */
import { spawn } from "node:child_process";
import { baseEnv } from "../../../test/_support/repo.ts";
import { phaseMedians, phaseMs, recordOf } from "../deploys.ts";
import { bareDeploy, interleaved } from "../drive.ts";
import { type Bench, type Case, post } from "../lab.ts";
import { bounded, fmtMs, log, median } from "../measure.ts";

const RUNS = 30;
const WARM_UP = 3;
/** The deploy p50 over the bare `git pull && true`'s, same runs. */
const OVER_BARE_MS = 3;

/** The lines that mark the steps of a deploy of `true`, in the order they come. */
const MARKS = [
  ["first byte", ""],
  ["[pull] git pull", "[pull] git pull"],
  ["[run] $ true", "[run] $ "],
  ["[run] exit code", "[run] exit code"],
  ["[done]", "[done]"],
] as const;
type Mark = (typeof MARKS)[number][0] | "end";

interface Traced {
  /** The request's moment on the wall clock (ms since the epoch, fractional). */
  sentAt: number;
  /** ms after the request at which each mark's chunk arrived, and the end of the answer. */
  at: Record<Mark, number>;
  text: string;
}

/** One deploy, its answer read chunk by chunk: when each mark arrived. */
async function tracedDeploy(url: string): Promise<Traced> {
  const sentAt = performance.timeOrigin + performance.now();
  const t0 = performance.now();
  const at: Partial<Record<Mark, number>> = {};
  let text = "";
  await bounded(
    (async () => {
      const response = await post(url);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        const now = performance.now() - t0;
        if (done) {
          at.end = now;
          return;
        }
        text += decoder.decode(value, { stream: true });
        for (const [mark, line] of MARKS) if (at[mark] === undefined && text.includes(line)) at[mark] = now;
      }
    })(),
    30_000,
    "a deploy",
  );
  if (!text.includes("[done] ok=true")) throw new Error(`a deploy did not end ok:\n${text.slice(-2000)}`);
  for (const [mark] of MARKS) if (at[mark] === undefined) throw new Error(`no ${mark} in a deploy's answer:\n${text}`);
  return { sentAt, at: at as Record<Mark, number>, text };
}

/** A bare `git pull` in `repo`, no `sh`: what the service's pull is, in ms. */
function barePull(repo: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["pull"], { cwd: repo, env: baseEnv(), stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`git pull ${code}`))));
  });
}

async function overhead(bench: Bench): Promise<void> {
  log(`overhead: ${RUNS} deploys of script true, bare git pull && true and bare git pull, interleaved`);
  const repo = bench.repo("overhead");
  const server = await bench.startService(repo, "true");
  const traced: Traced[] = [];
  let t: Awaited<ReturnType<typeof interleaved<"service" | "bare" | "pull">>>;
  try {
    t = await interleaved(RUNS, WARM_UP, {
      service: async () => {
        const run = await tracedDeploy(server.url);
        traced.push(run);
        return run.at.end;
      },
      bare: () => bareDeploy(bench, repo),
      pull: () => barePull(repo),
    });
  } finally {
    await server.stop();
  }
  const counted = traced.slice(WARM_UP);
  const records = counted.map((run) => {
    const id = /\[deploy\] (\S+) started/.exec(run.text)?.[1] ?? "";
    const record = recordOf(server.cwd, id);
    if (!record?.result) throw new Error(`no record of deploy ${id}`);
    return record;
  });
  const [o, b] = [t.service.p50, t.bare.p50];
  bench.report.row(
    `overhead: deploy p50 vs bare \`git pull && true\` (script true, up to date, ${RUNS} interleaved)`,
    `≤ bare + ${OVER_BARE_MS} ms`,
    fmtMs(o),
    `bare ${fmtMs(b)} (+${fmtMs(o - b)}), bare git pull ${fmtMs(t.pull.p50)}`,
    "",
    o <= b + OVER_BARE_MS,
  );
  // On the client's clock, each segment between two marks: they add up to the whole answer.
  const segment = (from: Mark | "request", to: Mark) =>
    median(counted.map((run) => run.at[to] - (from === "request" ? 0 : run.at[from])));
  const segments: [string, number][] = [
    [
      "request → first byte (the `[deploy]` line: routed, queued, the request and the record written)",
      segment("request", "first byte"),
    ],
    ["first byte → `[pull] git pull` (HEAD and the remotes read)", segment("first byte", "[pull] git pull")],
    [
      "`[pull] git pull` → `[run] $ true` (git pull, HEAD again, the repository's config)",
      segment("[pull] git pull", "[run] $ true"),
    ],
    [
      "`[run] $ true` → `[run] exit code` (the script, a process of its own)",
      segment("[run] $ true", "[run] exit code"),
    ],
    ["`[run] exit code` → `[done]` (the commit's words, the final record)", segment("[run] exit code", "[done]")],
    ["`[done]` → end of the answer", segment("[done]", "end")],
  ];
  for (const [what, ms] of segments)
    bench.report.row(`overhead: ${what} (median of ${RUNS})`, "(info)", fmtMs(ms), "", "", undefined);
  // On the server's clock (whole ms, the record's): before the record starts and after it ends.
  const before = median(
    counted.map((run, i) => Date.parse(records[i]!.result!.finishedAt) - run.sentAt - records[i]!.result!.durationMs),
  );
  const after = median(counted.map((run, i) => run.sentAt + run.at.end - Date.parse(records[i]!.result!.finishedAt)));
  const total = (i: number) => records[i]!.result!.durationMs;
  bench.report.row(
    `overhead: the record's own span, request → its start · durationMs · its end → end of the answer (median of ${RUNS})`,
    "(info)",
    `${fmtMs(before)} · ${fmtMs(median(records.map((_, i) => total(i))))} · ${fmtMs(after)}`,
    `phases: ${phaseMedians(records)}; pull phase − bare git pull ${fmtMs(median(records.map((r) => phaseMs(r, "pull"))) - t.pull.p50)}`,
    "",
    undefined,
  );
  const summed = segments.reduce((sum, [, ms]) => sum + ms, 0);
  bench.report.note(
    `overhead: the segments' medians add up to ${fmtMs(summed)} against the deploy p50 ${fmtMs(o)}; every deploy (ms after the request, ${MARKS.map(([m]) => m).join(" / ")} / end): ${counted
      .slice(0, 5)
      .map((run) => [...MARKS.map(([m]) => run.at[m]), run.at.end].map((ms) => ms.toFixed(1)).join("/"))
      .join(", ")} …`,
  );
}

export default { name: "overhead", run: overhead } satisfies Case;
