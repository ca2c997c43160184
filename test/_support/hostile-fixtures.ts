/**
 * Fixtures for the hostile-input tests: the memory of a process, and the processes carrying a marker in their
 * command line. The raw HTTP client they used to hold is raw-http.ts (its names are still exported here).
 */
import { readFileSync } from "node:fs";

export {
  chunkedBytes,
  dechunk,
  dribble,
  exchange,
  parseAnswer,
  type ExchangeOptions,
  type RawAnswer,
} from "./raw-http.ts";

/** Resident memory of a process in bytes (VmRSS of /proc/<pid>/status); 0 once it is gone. */
export function rssBytes(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Anonymous resident memory of a process (RssAnon): heaps and buffers, not the pages of its executable. */
export function anonBytes(pid: number): number {
  try {
    return Number(/RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/**
 * Records the highest value of `sample` (say, `() => rssBytes(pid)`) every `everyMs` until the returned
 * function is called; that returns the peak.
 */
export function peakOf(sample: () => number, everyMs = 10): () => number {
  let peak = sample();
  const timer = setInterval(() => (peak = Math.max(peak, sample())), everyMs);
  return () => {
    clearInterval(timer);
    return Math.max(peak, sample());
  };
}

/** The processes whose command line contains `marker`: `pid args` lines from `ps -eo pid=,args=`. */
export function markerProcesses(marker: string): { pid: number; args: string }[] {
  const ps = Bun.spawnSync(["ps", "-eo", "pid=,args="], { stdout: "pipe", stderr: "ignore" });
  const out: { pid: number; args: string }[] = [];
  for (const line of ps.stdout.toString().split("\n")) {
    const match = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (match && match[2]!.includes(marker) && Number(match[1]) !== process.pid)
      out.push({ pid: Number(match[1]), args: match[2]! });
  }
  return out;
}

/** Cleanup: SIGKILLs, one by one and by pid, the processes this test started that carry `marker`. */
export function killMarked(marker: string): void {
  for (const { pid } of markerProcesses(marker)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}
