/**
 * Start to listening (the compiled binary, median of START_RUNS starts, beside adnanh/webhook's) and idle memory.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv } from "../../../test/_support/repo.ts";
import { BIN, type Bench, type Case, freePort, SECRET, type Server, waitForListen } from "../lab.ts";
import { fmtMB, fmtMs, fmtX, log, MB, median, procStatus, sleep } from "../measure.ts";

const START_RUNS = 15;

async function startAndIdle(bench: Bench, repo: string): Promise<void> {
  const { hasWebhook } = bench;
  log(`start to listening: ${START_RUNS} starts of each`);
  const cwd = join(bench.tmpRoot, "starts");
  mkdirSync(cwd, { recursive: true });
  const hooks = join(cwd, "hooks.json");
  writeFileSync(hooks, JSON.stringify([{ id: "true", "execute-command": "/bin/true" }]));
  const timeStart = async (argv: string[], port: number, env: Record<string, string>): Promise<number> => {
    const t0 = performance.now();
    const proc = Bun.spawn(argv, { cwd, env, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    bench.track(proc);
    try {
      await waitForListen(port, 5000, () => proc.exitCode === null);
      return performance.now() - t0;
    } finally {
      await bench.stopProcess(proc);
    }
  };
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let i = 0; i < START_RUNS; i++) {
    const port = await freePort();
    ours.push(
      await timeStart(
        [BIN],
        port,
        baseEnv({
          SERVICE_PORT: String(port),
          SERVICE_HOSTNAME: "127.0.0.1",
          SERVICE_SECRET: SECRET,
          SERVICE_REPO_PATH: repo,
          SERVICE_RUN_SCRIPT: "true",
        }),
      ),
    );
    if (hasWebhook) {
      const port2 = await freePort();
      theirs.push(
        await timeStart(["webhook", "-hooks", hooks, "-ip", "127.0.0.1", "-port", String(port2)], port2, baseEnv()),
      );
    }
  }
  const ourStart = median(ours);
  const theirStart = hasWebhook ? median(theirs) : NaN;
  bench.report.row(
    "start to listening (median of 15)",
    "≤ 30 ms",
    fmtMs(ourStart),
    hasWebhook ? fmtMs(theirStart) : "n/a",
    hasWebhook ? fmtX(ourStart / theirStart) : "n/a",
    ourStart <= 30,
  );

  log("idle memory");
  const server = await bench.startService(repo, "true");
  let webhook: Server | undefined;
  try {
    if (hasWebhook) webhook = await bench.startWebhook(repo, [{ id: "true", script: "true" }]);
    await sleep(1000);
    const status = procStatus(server.pid);
    const ourRss = status?.rss ?? NaN;
    if (status)
      bench.report.note(
        `idle memory: ${fmtMB(status.anon)} anonymous + ${fmtMB(status.file)} file-backed (pages of the 107 MB executable: Bun's runtime and the JS it embeds)`,
      );
    const theirRss = webhook ? (procStatus(webhook.pid)?.rss ?? NaN) : NaN;
    bench.report.row(
      "idle memory (VmRSS 1 s after start)",
      "≤ 35 MB",
      fmtMB(ourRss),
      webhook ? fmtMB(theirRss) : "n/a",
      webhook ? fmtX(ourRss / theirRss) : "n/a",
      ourRss <= 35 * MB,
    );
  } finally {
    await server.stop();
    await webhook?.stop();
  }
}

export default {
  name: "start and idle memory",
  run: (bench) => startAndIdle(bench, bench.repo("repo")),
} satisfies Case;
