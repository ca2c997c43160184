/** What the bench needs before its cases: the machine it runs on (the header of the tables) and a fresh binary. */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../test/_support/repo.ts";
import { BIN, type Bench } from "./lab.ts";
import { log, which } from "./measure.ts";

export function machine(): string[] {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? "unknown";
  const nproc = Bun.spawnSync(["nproc"]).stdout.toString().trim() || String(cpus().length);
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const version = (argv: string[]) => {
    try {
      const result = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
      return `${result.stdout}${result.stderr}`.trim().split("\n")[0] ?? "?";
    } catch {
      return "missing";
    }
  };
  return [
    `machine: ${nproc} cores (${model}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB memory, load average ${load}, ${process.platform}/${process.arch}, kernel ${readFileSync("/proc/sys/kernel/osrelease", "utf8").trim()}`,
    `service: dist/service (Bun ${Bun.version}, compiled); peer: ${which("webhook") ? version(["webhook", "-version"]) : "webhook missing"}; ${which("wrk") ? version(["wrk", "-v"]) : "wrk missing"}; ${version(["git", "--version"])}`,
  ];
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export async function ensureBinary(bench: Bench): Promise<void> {
  if (process.env.BENCH_BIN) {
    if (!existsSync(BIN)) throw new Error(`BENCH_BIN ${BIN} does not exist`);
    return;
  }
  const stale = !existsSync(BIN) || statSync(BIN).mtimeMs < newestMtime(join(ROOT, "src"));
  if (!stale) return;
  if (process.argv.includes("--no-build"))
    throw new Error(
      "dist/service is missing or older than src/ (run `npm run build -- --only-host`, or leave out --no-build)",
    );
  log("building dist/service (bun scripts/build.ts --only-host)");
  const proc = Bun.spawn([process.execPath, join(ROOT, "scripts", "build.ts"), "--only-host"], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  bench.track(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), 180_000);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  bench.untrack(proc);
  if (code !== 0) throw new Error(`the build failed:\n${out}${err}`);
}
