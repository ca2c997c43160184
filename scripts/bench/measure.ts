/** The bench's measuring tools: progress lines, bounded waits, medians, the memory of a process, and units. */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export const MB = 1024 * 1024;

const startedAt = performance.now();

/** Seconds since the bench started, for the progress lines and the final "done in". */
export const elapsedSeconds = () => (performance.now() - startedAt) / 1000;
export const log = (message: string) =>
  process.stderr.write(`[bench ${elapsedSeconds().toFixed(1).padStart(5)} s] ${message}\n`);
export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
export const median = (values: number[]) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export async function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function which(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const file = join(dir || ".", command);
    try {
      if (statSync(file).isFile()) return file;
    } catch {}
  }
  return undefined;
}

export const fmtMB = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
export const fmtMs = (ms: number) => `${ms.toFixed(1)} ms`;
export const fmtX = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : "n/a");

export function procStatus(pid: number): { rss: number; hwm: number; anon: number; file: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { rss: kb("VmRSS") * 1024, hwm: kb("VmHWM") * 1024, anon: kb("RssAnon") * 1024, file: kb("RssFile") * 1024 };
  } catch {
    return undefined;
  }
}

/**
 * Samples VmRSS every 10 ms; `stop` returns the largest sample, the kernel's own peak (VmHWM), and how the
 * largest sample split into anonymous memory (heaps) and file-backed pages (the executable's code).
 */
export function rssSampler(pid: number): { stop(): { peak: number; hwm: number; split: string } } {
  let peak = 0;
  let split = "";
  const sample = () => {
    const status = procStatus(pid);
    if (status && status.rss > peak) {
      peak = status.rss;
      split = `${fmtMB(status.anon)} anonymous + ${fmtMB(status.file)} file-backed`;
    }
  };
  sample();
  const timer = setInterval(sample, 10);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { peak, hwm: procStatus(pid)?.hwm ?? NaN, split };
    },
  };
}

/** The JSON log records of a service's deploys, done ones only. */
export function doneRecords(
  cwd: string,
): { durationMs: number; status: string; result: { ok: boolean }; logFile: string }[] {
  const dir = join(cwd, ".service", "logs");
  if (!existsSync(dir)) return [];
  const out = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .sort()) {
    try {
      const record = JSON.parse(readFileSync(join(dir, name), "utf8"));
      if (record.status === "done") out.push({ ...record, logFile: join(dir, name.replace(/\.json$/, ".log")) });
    } catch {}
  }
  return out;
}
