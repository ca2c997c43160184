/**
 * What the cases that look inside a deploy read: one deploy timed to its `[done]` line, its JSON record (phases,
 * release, killedBy), the admin listener's `/metrics`, and how many of a set of scripts ran at once.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { lastLine } from "../../test/_support/repo.ts";
import { post, SECRET } from "./lab.ts";
import { bounded, median } from "./measure.ts";

export interface Deployed {
  /** The deploy id (from its `[deploy] <id> started` line). */
  id: string;
  text: string;
  ok: boolean;
  /** From the request to the end of the answer (its `[done]` line). */
  ms: number;
}

/** One authorized POST (as `host`, for an app routed by its host), its whole answer read. */
export async function deploy(
  url: string,
  options: { secret?: string; host?: string; timeoutMs?: number } = {},
): Promise<Deployed> {
  const { secret = SECRET, host, timeoutMs = 60_000 } = options;
  const t0 = performance.now();
  const text = await bounded(
    (host ? fetch(url, { method: "POST", headers: { host, "x-service-secret": secret } }) : post(url, secret)).then(
      (r) => r.text(),
    ),
    timeoutMs,
    `a deploy to ${url}`,
  );
  const ms = performance.now() - t0;
  const id = /\[deploy\] (\S+) started/.exec(text)?.[1];
  if (!id) throw new Error(`a deploy to ${url} did not start:\n${text.slice(-2000)}`);
  return { id, text, ok: lastLine(text).startsWith("[done] ok=true"), ms };
}

export interface DeployRecord {
  status: string;
  durationMs?: number;
  result?: {
    ok: boolean;
    durationMs: number;
    finishedAt: string;
    killedBy?: string;
    phases?: { name: string; startedAt: string; ms: number }[];
    release?: { id: string; carried?: { path: string; files: number; bytes: number }[]; pruned?: string[] };
  };
}

/** The JSON record file of deploy `id` under the service's `.service/logs/` (an app's own folder too), if any. */
export function recordFile(cwd: string, id: string): string {
  const root = join(cwd, ".service", "logs");
  if (!existsSync(root)) return "";
  const dirs = [
    root,
    ...readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(root, e.name)),
  ];
  for (const dir of dirs) for (const name of readdirSync(dir)) if (name.endsWith(`${id}.json`)) return join(dir, name);
  return "";
}

/** The JSON record of deploy `id` (recordFile), if readable. */
export function recordOf(cwd: string, id: string): DeployRecord | undefined {
  const file = recordFile(cwd, id);
  try {
    return file ? (JSON.parse(readFileSync(file, "utf8")) as DeployRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** The ms of the record's phases named `name` (a phase seen twice counts twice); 0 when absent. */
export function phaseMs(record: DeployRecord | undefined, name: string): number {
  return (record?.result?.phases ?? []).filter((p) => p.name === name).reduce((sum, p) => sum + p.ms, 0);
}

/** The medians of each phase over `records`, in the order they first appear: `queue 0 ms · pull 9 ms · …`. */
export function phaseMedians(records: DeployRecord[]): string {
  const names: string[] = [];
  for (const r of records) for (const p of r.result?.phases ?? []) if (!names.includes(p.name)) names.push(p.name);
  return names.map((name) => `${name} ${median(records.map((r) => phaseMs(r, name))).toFixed(0)} ms`).join(" · ");
}

/** `/metrics` of an admin listener on loopback (no token needed there): each sample by its name and labels. */
export async function metrics(adminPort: number): Promise<Map<string, number>> {
  const text = await bounded(
    fetch(`http://127.0.0.1:${adminPort}/metrics`).then((r) => r.text()),
    5000,
    "/metrics",
  );
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) out.set(match[1]!, Number(match[2]));
  }
  return out;
}

/**
 * Intervals `<start ns> <end ns>` one a line (as the scripts append them): how many ran, and the most that ran at
 * the same moment.
 */
export function peakConcurrency(file: string): { runs: number; peak: number } {
  const lines = existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean) : [];
  const events: [number, number][] = [];
  for (const line of lines) {
    const [start, end] = line.split(" ").map(Number) as [number, number];
    events.push([start, 1], [end, -1]);
  }
  // At the same instant an end comes before a start: touching runs did not overlap.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, delta] of events) peak = Math.max(peak, (now += delta));
  return { runs: lines.length, peak };
}
