import { appendFileSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { isRunning } from "./liveness.ts";
import { LOG_DIR, type DeployRecord } from "./log.ts";

/** How many of the newest JSON logs are looked at on start: a crash leaves its record among the last ones. */
const RECENT = 200;

/**
 * Marks the records of deploys whose process died mid-deploy (kill -9, power loss) as "interrupted", so the
 * history never shows a deploy as running forever. Returns the ids it marked.
 */
export function markInterruptedDeploys(cwd: string): string[] {
  const dir = resolve(cwd, LOG_DIR);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json")).sort().slice(-RECENT);
  } catch {
    return [];
  }
  const marked: string[] = [];
  for (const name of names) {
    const file = join(dir, name);
    let record: DeployRecord;
    try {
      record = JSON.parse(readFileSync(file, "utf8")) as DeployRecord;
    } catch {
      continue;
    }
    if (record.status !== "running" || isRunning(record.pid, record.pidStart)) continue;
    const updated: DeployRecord = { ...record, status: "interrupted" };
    writeFileSync(`${file}.tmp`, `${JSON.stringify(updated, null, 2)}\n`, { mode: 0o640 });
    renameSync(`${file}.tmp`, file);
    try {
      appendFileSync(file.replace(/\.json$/, ".log"), "\n[interrupted] the service stopped before this deploy finished\n");
    } catch {}
    marked.push(record.id);
  }
  return marked;
}
