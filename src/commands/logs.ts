import { defineCommand } from "citty";
import { closeSync, existsSync, readSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { processAlive } from "../system/liveness.ts";
import { shown } from "../system/shown.ts";
import { openRegular, readBytesNoFollow, readNoFollow } from "../system/files.ts";
import {
  endFromLog,
  findDeploy,
  findQueued,
  isDeployRef,
  newestDeploys,
  resultLabel,
  missingLogDir,
  neverStarted,
  queuedMessage,
  readDeployRecord,
  type HistoryEntry,
} from "../history/read.ts";
import { phasesLine } from "../deploy/phases.ts";
import type { DeployResult } from "../types.ts";
import { keeps, OUTCOMES, parseFilter } from "../history/filter.ts";
import { cwdArg, serviceDir } from "./_cwd.ts";
import { endsWhenOutputCloses } from "./_guard.ts";

function duration(ms: number | null): string {
  if (ms === null) return "-";
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes}m ${String(Math.round((ms % 60_000) / 1000)).padStart(2, "0")}s`;
}

/** Longest commit subject a listing shows: `service logs <id> --json` has all of it. */
const SUBJECT_CHARS = 50;

/**
 * The commit a deploy tried: its short hash and subject (`-` while unknown), the ref it was asked for, and the
 * commit live after it when that is another (a failed build, a rollback). Older records name only the live one.
 */
function commitCell(entry: HistoryEntry): string {
  const ref = entry.ref ? `[ref ${entry.ref}]` : "";
  const tried = entry.target ?? entry.commit;
  if (!tried) return ["-", ref].filter(Boolean).join(" ");
  const { sha, subject } = tried;
  const cut = subject.length > SUBJECT_CHARS ? `${subject.slice(0, SUBJECT_CHARS - 1)}…` : subject;
  const live = entry.commit && entry.commit.sha !== sha ? `(live: ${entry.commit.sha.slice(0, 7)})` : "";
  return [sha.slice(0, 7), cut, ref, live].filter(Boolean).join(" ");
}

function table(entries: HistoryEntry[]): string {
  // A NOTE column only when a deploy's files are damaged: the mark sits on the row itself.
  const noted = entries.some((e) => e.problem);
  const delivered = entries.some((e) => e.delivery);
  const released = entries.some((e) => e.release);
  const rows = [
    [
      "STARTED (UTC)",
      "ID",
      "APP",
      "TRIGGER",
      "EVENT",
      ...(delivered ? ["DELIVERY"] : []),
      "DURATION",
      "RESULT",
      "EXIT",
      "ROLLBACK",
      ...(released ? ["RELEASE"] : []),
      "BY",
      "COMMIT",
      ...(noted ? ["NOTE"] : []),
    ],
    ...entries.map((e) => [
      e.startedAt.replace("T", " ").slice(0, 19),
      e.id.slice(0, 8),
      e.app ?? "-",
      e.trigger ?? "-",
      e.event ?? "-",
      ...(delivered ? [e.delivery ?? "-"] : []),
      duration(e.durationMs),
      `${resultLabel(e)}${e.cancelledBy ? ` by ${e.cancelledBy}` : ""}${e.forced ? " (forced)" : ""}`,
      e.exitCode === null ? "-" : String(e.exitCode),
      e.rolledBack ? "yes" : "-",
      ...(released ? [e.release ?? "-"] : []),
      e.actor ?? "-",
      commitCell(e),
      // An unknown outcome is no damaged file: its note says why it is unknown.
      ...(noted ? [e.problem ? (e.status === "unknown" ? e.problem : `corrupt: ${e.problem}`) : ""] : []),
    ]),
  ];
  // Refs, actors, delivery ids and subjects come from outside: shown without the marks that reorder or hide text.
  const cells = rows.map((row) => row.map(shown));
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** Whether the service process that wrote a running record still runs (a record without a pid: assumed so). */
function writerRunning(record: { pid?: unknown; pidStart?: unknown }): boolean {
  if (typeof record.pid !== "number") return true;
  return processAlive(record.pid, typeof record.pidStart === "string" ? record.pidStart : undefined);
}

/** How many 200 ms polls in a row the JSON record may be unreadable before --follow gives up on it. */
const UNREADABLE_POLLS = 10;

/** Prints a running deploy's .log as it grows, until its JSON record says it ended. */
async function follow(cwd: string, ref: string, keep: (entry: HistoryEntry) => boolean): Promise<void> {
  // Waiting below is for a deploy that has not started yet: a ref that can never match would wait forever.
  if (!isDeployRef(ref)) throw new Error(`"${ref}" is not a deploy id, an id prefix or "last"`);
  let entry = findDeploy(cwd, ref, keep);
  let announced = false;
  // An acknowledged deploy may still wait in the queue: its files appear when it starts.
  while (typeof entry === "string" && /^no deploy with id/.test(entry) && ref !== "last") {
    const queued = findQueued(cwd, ref);
    if (queued && !queued.waiting) throw new Error(neverStarted(queued.record));
    if (!announced) process.stderr.write(`waiting for deploy ${ref} to start…\n`);
    announced = true;
    await sleep(200);
    entry = findDeploy(cwd, ref, keep);
  }
  if (typeof entry === "string") throw new Error(entry);
  const { logPath, jsonPath } = entry;
  let offset = 0;
  const buffer = Buffer.alloc(64 * 1024);
  const drain = () => {
    if (!existsSync(logPath)) return;
    const fd = openRegular(logPath);
    try {
      for (;;) {
        const read = readSync(fd, buffer, 0, buffer.length, offset);
        if (read <= 0) break;
        offset += read;
        process.stdout.write(buffer.subarray(0, read));
      }
    } finally {
      closeSync(fd);
    }
  };
  let unreadable = 0;
  for (;;) {
    drain();
    let record: { status?: unknown; pid?: unknown; pidStart?: unknown } | undefined;
    try {
      record = JSON.parse(readNoFollow(jsonPath));
      unreadable = 0;
    } catch (error) {
      // The record is replaced atomically, so this is a damaged file (or one not written yet), not a race.
      if (++unreadable >= UNREADABLE_POLLS) {
        throw new Error(
          `cannot tell whether deploy ${entry.id} ended: ${jsonPath} is unreadable (${(error as Error).message.split("\n")[0]})`,
        );
      }
    }
    if (record && record.status !== "running") {
      drain();
      return;
    }
    // A service killed mid-deploy (kill -9) never finishes the record: without this, --follow would wait forever.
    if (record && !writerRunning(record)) {
      drain();
      // Unless the deploy ended and only its record could not say so (a full disk): its .log ends with [done].
      if (endFromLog(logPath)) return;
      throw new Error(
        `deploy ${entry.id} will not finish: the service process that ran it (pid ${record.pid}) is gone`,
      );
    }
    await sleep(200);
  }
}

export const logsCommand = defineCommand({
  meta: {
    name: "logs",
    description:
      "Deploy history from .service/logs/ (no server needed): the recent deploys, newest first, or one deploy's log.",
  },
  args: {
    deploy: {
      type: "positional",
      required: false,
      description: "A deploy id, an id prefix, or `last`: print that deploy's log",
    },
    limit: { type: "string", default: "20", description: "How many deploys to list" },
    app: { type: "string", description: "Only deploys of this app (multi-app mode)" },
    failed: { type: "boolean", description: "Only deploys that did not succeed" },
    outcome: {
      type: "string",
      valueHint: "list",
      description: `Only deploys with these outcomes, comma-separated: ${OUTCOMES.join(", ")}`,
    },
    since: {
      type: "string",
      valueHint: "when",
      description:
        "Only deploys started since then: a duration back from now (30m, 2h, 7d) or a date or time (2026-05-01, UTC)",
    },
    json: { type: "boolean", description: "JSON: the list as an array, or the deploy's JSON log file" },
    follow: { type: "boolean", alias: "f", description: "Keep printing a running deploy's log until it is done" },
    cwd: cwdArg,
  },
  async run({ args }) {
    endsWhenOutputCloses();
    const cwd = serviceDir(args.cwd);
    // --app, --failed, --outcome and --since choose among the deploys, for one deploy (`last`, an id) as for a list.
    const filter = parseFilter(args, "--");
    if (args.deploy) {
      const filtered =
        filter.app !== undefined || filter.outcomes !== undefined || filter.since !== undefined || args.failed;
      if (args.follow && !args.json) return follow(cwd, args.deploy, keeps(filter));
      let entry = findDeploy(cwd, args.deploy, keeps(filter));
      if (typeof entry === "string" && args.deploy === "last" && filtered) entry = nothingListed(cwd, args);
      const queued = typeof entry === "string" ? findQueued(cwd, args.deploy) : undefined;
      if (queued && !queued.waiting) throw new Error(neverStarted(queued.record));
      if (queued && args.json)
        return void process.stdout.write(`${JSON.stringify({ status: "queued", ...queued.record }, null, 2)}\n`);
      if (queued) {
        const where = args.cwd === undefined ? "" : ` --cwd ${cwd}`;
        return void process.stdout.write(
          `${queuedMessage(queued.record, `service logs ${queued.record.id.slice(0, 8)} --follow${where}`)}\n`,
        );
      }
      if (typeof entry === "string") throw new Error(entry);
      const file = args.json ? entry.jsonPath : entry.logPath;
      if (!existsSync(file)) {
        // A running deploy's .log is created right after its record: none yet is nothing written yet.
        if (entry.status === "running") return;
        throw new Error(`the log file ${file} is missing`);
      }
      process.stdout.write(readBytesNoFollow(file));
      if (entry.problem) process.stderr.write(`note: ${entry.problem}\n`);
      // Where its time went, for a person at a terminal, beside the transcript (which ends with its `[done]` line);
      // a pipe gets the transcript alone (the phases are in --json).
      const phases =
        args.json || !process.stderr.isTTY
          ? undefined
          : (readDeployRecord(entry.jsonPath)?.result as DeployResult | undefined)?.phases;
      if (phases?.length) process.stderr.write(`phases: ${phasesLine(phases)}\n`);
      return;
    }
    const limit = Number(args.limit);
    if (!Number.isInteger(limit) || limit <= 0)
      throw new Error(`--limit expects a positive whole number, got "${args.limit}"`);
    // A page of the newest: the records of older deploys are not read.
    const entries = newestDeploys(cwd, limit, keeps(filter));
    if (args.json) process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
    else if (entries.length === 0) process.stdout.write(`${nothingListed(cwd, args)}\n`);
    else process.stdout.write(`${table(entries)}\n`);
  },
});

/** What an empty listing means: no history here at all, or none of the deploys asked for. */
function nothingListed(
  cwd: string,
  args: { failed?: boolean; app?: string; outcome?: string; since?: string },
): string {
  const missing = missingLogDir(cwd);
  if (missing) return `no deploys here: ${missing}`;
  const { failed, app, outcome, since } = args;
  if (!failed && !app && outcome === undefined && since === undefined) return "no deploys yet";
  const which = [
    ...(outcome !== undefined ? [`outcome ${outcome}`] : []),
    ...(since !== undefined ? [`since ${since}`] : []),
  ];
  return `no ${failed ? "failed " : ""}deploys${app ? ` of app "${app}"` : ""}${which.length ? ` (${which.join(", ")})` : ""}`;
}
