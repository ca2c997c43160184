import { closeSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { openForAppend, readNoFollow, removeStaleTemps, writeAll, writeFileAtomic } from "./files.ts";
import { isRunning } from "./liveness.ts";
import { endFromLog } from "../history.ts";
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
      record = JSON.parse(readNoFollow(file)) as DeployRecord;
    } catch {
      continue;
    }
    if (record.status !== "running" || isRunning(record.pid, record.pidStart)) continue;
    // A deploy that ended (its .log has the [done] line) while its record could not say so is repaired, not interrupted.
    const ended = endFromLog(file.replace(/\.json$/, ".log"));
    const updated: DeployRecord = { ...record, ...(ended ?? { status: "interrupted" }) };
    try {
      writeFileAtomic(file, `${JSON.stringify(updated, null, 2)}\n`);
    } catch {
      // A full disk: the record stays as it is, and the next start tries again.
      continue;
    }
    if (ended) continue;
    appendNoFollow(file.replace(/\.json$/, ".log"), "\n[interrupted] the service stopped before this deploy finished\n");
    marked.push(record.id);
  }
  removeStaleTemps(dir);
  return marked;
}

/** Appends to an existing file, never through a link; a failure only loses the note. */
function appendNoFollow(file: string, text: string): void {
  try {
    const fd = openForAppend(file);
    try {
      writeAll(fd, Buffer.from(text));
    } finally {
      closeSync(fd);
    }
  } catch {}
}
