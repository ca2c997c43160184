import { closeSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { openForAppend, readNoFollow, removeStaleTemps, writeAll, writeFileAtomic } from "../system/files.ts";
import { groupAlive, groupMembers, stopGroup, type Group } from "../system/groups.ts";
import { processAlive } from "../system/liveness.ts";
import { removeStaleBlanks } from "../history/blanks.ts";
import { endFromLog } from "../history/read.ts";
import { watchInterrupted } from "../history/watching.ts";
import { LOG_DIR, type DeployRecord } from "../history/record.ts";
import { defaultLogger, type Logger } from "../system/logger.ts";
import { KILL_GRACE_MS } from "../system/process.ts";
import { dropTicket, queueKey, scanTickets, ticketDir, type TicketContent } from "./tickets.ts";

/** How many of the newest JSON logs are looked at on start: a crash leaves its record among the last ones. */
const RECENT = 200;

/**
 * Marks the records of deploys whose process died mid-deploy (kill -9, power loss) as "interrupted", so the
 * history never shows a deploy as running forever, and starts stopping the process groups such a deploy left
 * running (see recoverOrphan), saying so through `logger`. Returns the ids it marked.
 */
export function markInterruptedDeploys(cwd: string, logger: Logger = defaultLogger()): string[] {
  const dir = resolve(cwd, LOG_DIR);
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith(".json"))
      .sort()
      .slice(-RECENT);
  } catch {
    return [];
  }
  const marked: string[] = [];
  const repos = new Set<string>();
  for (const name of names) {
    const file = join(dir, name);
    let record: DeployRecord;
    try {
      record = JSON.parse(readNoFollow(file)) as DeployRecord;
    } catch {
      continue;
    }
    if (record.status !== "running" || processAlive(record.pid, record.pidStart)) continue;
    // A deploy that ended (its .log has the [done] line) while its record could not say so is repaired, not interrupted.
    const ended = endFromLog(file.replace(/\.json$/, ".log"));
    // Found watching (docs/watch.md): it went live and was healthy; recorded ok, its watch not finished.
    const watched = ended ? undefined : watchInterrupted(record, { json: file, log: file.replace(/\.json$/, ".log") });
    const updated: DeployRecord = { ...record, ...(ended ?? watched ?? { status: "interrupted" }) };
    try {
      writeFileAtomic(file, `${JSON.stringify(updated, null, 2)}\n`);
    } catch {
      // A full disk: the record stays as it is, and the next start tries again.
      continue;
    }
    if (ended) continue;
    if (watched) {
      appendNoFollow(
        file.replace(/\.json$/, ".log"),
        "\n[watch] not finished: the service stopped during the watch; what is live stays\n[done] ok=true exitCode=0\n",
      );
      repos.add(queueKey(resolve(cwd, record.repoPath)));
      continue;
    }
    appendNoFollow(
      file.replace(/\.json$/, ".log"),
      "\n[interrupted] the service stopped before this deploy finished\n",
    );
    marked.push(record.id);
    repos.add(queueKey(resolve(cwd, record.repoPath)));
  }
  for (const key of repos) {
    const tickets = ticketDir(key);
    for (const orphan of scanTickets(tickets).orphans) void recoverOrphan(key, tickets, orphan, logger);
  }
  removeStaleTemps(dir);
  removeStaleBlanks(dir);
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

/** The .log of deploy `id` in `logs`, if it is there. */
function logOf(logs: string | undefined, id: string | undefined): string | undefined {
  if (!logs || !id) return undefined;
  try {
    const name = readdirSync(logs).find((n) => n.endsWith(`_${id}.log`));
    return name ? join(logs, name) : undefined;
  } catch {
    return undefined;
  }
}

const named = (group: Group) => {
  const commands = [...new Set(groupMembers(group.pgid).map((m) => m.command))];
  return `process group ${group.pgid}${commands.length ? ` (${commands.join(", ")})` : ""}`;
};

const recovering = new Map<string, Promise<void>>();

/**
 * A deploy whose own process died (the service or a `deploy` killed with -9, an out-of-memory kill) leaves its
 * commands running in their process groups, and its ticket holds the queue while they run: stops them
 * (SIGTERM, then SIGKILL after KILL_GRACE_MS), says so on the output and in that deploy's log, then frees the
 * queue. A group that even SIGKILL does not end keeps the queue held: two deploys never run at once.
 */
export function recoverOrphan(
  repo: string,
  dir: string,
  orphan: { name: string; content: TicketContent },
  log: Logger,
): Promise<void> {
  const file = join(dir, orphan.name);
  let running = recovering.get(file);
  if (running) return running;
  running = (async () => {
    const groups = orphan.content.groups.filter(groupAlive);
    const what = groups.map(named).join(", ");
    const deploy = orphan.content.id ? `deploy ${orphan.content.id}` : "a deploy";
    log.warn(
      `${deploy} of ${repo} was interrupted and left ${what} running: stopping it (SIGTERM, then SIGKILL after ${KILL_GRACE_MS} ms) before the next deploy of that repository`,
    );
    const logFile = logOf(orphan.content.logs, orphan.content.id);
    if (logFile)
      appendNoFollow(
        logFile,
        `\n[interrupted] this deploy's process died while ${what} ran; stopping it (SIGTERM, then SIGKILL) before the next deploy\n`,
      );
    const stopped = (await Promise.all(groups.map((group) => stopGroup(group, KILL_GRACE_MS)))).every(Boolean);
    if (stopped) {
      dropTicket(dir, orphan.name);
      log.info(`stopped ${what} left by ${deploy}`);
    } else {
      log.error(`cannot stop ${what} left by ${deploy}: deploys of ${repo} wait until it ends`);
    }
  })().finally(() => recovering.delete(file));
  recovering.set(file, running);
  return running;
}
