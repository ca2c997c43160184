import { dropRequest } from "../history/requests.ts";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { readDeployRecord } from "../history/entry.ts";
import { findDeploy, findQueued, isDeployRef, type HistoryEntry } from "../history/read.ts";
import { cleanActor, cliActor } from "../system/actor.ts";
import { ensurePrivateDir, readNoFollow, writeFileAtomic } from "../system/files.ts";

/**
 * Cancelling a deploy from any process of the working directory: `service cancel` (or the library) leaves a
 * request file `.service/cancel/<id>.json`; the process that holds the deploy (a server, a `service deploy` in
 * a shell) looks for requests while it has deploys, acts on its own, and removes the request to say it did.
 */
export const CANCEL_DIR = join(".service", "cancel");

/** How often a process with deploys looks for cancel requests. */
const WATCH_MS = 200;
/** How long a cancel waits for the deploy's process to take the request. */
const TAKE_MS = 5_000;
/** How long a cancel waits, once taken, for the deploy to end (its commands get TERM, then KILL, then maybe a rollback). */
const END_MS = 15_000;

const UUID = /^[0-9a-f-]{36}$/;
const requestFile = (cwd: string, id: string) => resolve(cwd, CANCEL_DIR, `${id}.json`);

/**
 * Who asks for a cancel: the words the stream and the logs say ("by cli:alice"), and the actor recorded; one
 * wording everywhere, the history's (`cancelled by cli:alice`).
 */
export interface CancelRequest {
  by: string;
  actor: string;
}

/** A cancel asked by `actor` (`admin@<address>`, `library:<user>`); by default the shell's user (`cli:<user>`). */
export function cancelledBy(actor: string = cliActor()): CancelRequest {
  return { by: `by ${actor}`, actor };
}

/** Who cancelled a deploy and when, as its record keeps it (`by` is null for a shutdown). */
export interface CancelMark {
  by: string | null;
  at: string;
}

/** One deploy's cancellation: said once, heard by whoever listens (the pipeline, the queue). */
export class Cancellation {
  reason: string | undefined;
  /** Who asked and when, once it is cancelled. */
  mark: CancelMark | undefined;
  private readonly listeners: ((reason: string) => void)[] = [];

  cancel(reason: string, mark: CancelMark = { by: null, at: new Date().toISOString() }): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.mark = mark;
    for (const listener of this.listeners.splice(0)) listener(reason);
  }

  onCancel(listener: (reason: string) => void): void {
    if (this.reason !== undefined) listener(this.reason);
    else this.listeners.push(listener);
  }
}

/** The cancel requests for one process's deploys: one timer, running only while the process has deploys. */
export class CancelWatch {
  private readonly watched = new Map<string, { cwd: string; take: (by: string, mark: CancelMark) => void }>();
  private timer: ReturnType<typeof setInterval> | undefined;

  /** Calls `take(by, mark)` when a request for `id` appears; returns the function that stops watching. */
  watch(cwd: string, id: string, take: (by: string, mark: CancelMark) => void): () => void {
    this.watched.set(id, { cwd, take });
    if (!this.timer) {
      this.timer = setInterval(() => this.look(), WATCH_MS);
      this.timer.unref?.();
    }
    return () => {
      this.watched.delete(id);
      if (this.watched.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  private look(): void {
    const cwds = new Set([...this.watched.values()].map((w) => w.cwd));
    for (const cwd of cwds) {
      let names: string[];
      try {
        names = readdirSync(resolve(cwd, CANCEL_DIR));
      } catch {
        continue;
      }
      for (const name of names) {
        const id = name.replace(/\.json$/, "");
        const watched = this.watched.get(id);
        if (!watched || watched.cwd !== cwd) continue;
        let by = "by another process";
        const mark: CancelMark = { by: null, at: new Date().toISOString() };
        try {
          const request = JSON.parse(readNoFollow(join(resolve(cwd, CANCEL_DIR), name))) as {
            by?: unknown;
            actor?: unknown;
            at?: unknown;
          };
          // It goes into the deploy's stream and logs: one short line.
          if (typeof request.by === "string" && request.by.length <= 200)
            by = request.by.replace(/[\u0000-\u001f\u007f]+/g, " ");
          mark.by = cleanActor(request.actor) ?? null;
          if (typeof request.at === "string" && !Number.isNaN(Date.parse(request.at))) mark.at = request.at;
        } catch {}
        rmSync(requestFile(cwd, id), { force: true });
        watched.take(by, mark);
      }
    }
  }
}

export interface CancelResult {
  id: string;
  /** "cancelled": it ended cancelled; "stopping": the holder took the request and the deploy still ends (a rollback). */
  state: "cancelled" | "stopping";
  /** The cancel ended the deploy's watch (docs/watch.md): it is recorded ok, what went live stays. */
  watchEnded?: true;
}

/**
 * Cancels the deploy `ref` (an id or its start) of the service in `cwd`, waiting or running, wherever it runs.
 * Throws with a message for the user: an unknown id, a deploy already finished, a holder that is gone.
 */
export async function cancelDeploy(cwd: string, ref: string, request: CancelRequest): Promise<CancelResult> {
  if (ref === "last" || !isDeployRef(ref))
    throw new Error(`"${ref}" is not a deploy id: give the id (or its start) that service logs shows`);
  const queued = findQueued(cwd, ref);
  let id: string;
  if (queued) {
    // Its process is gone: the request is dropped, and the next start of the service does not replay it.
    if (!queued.waiting) {
      dropRequest(cwd, queued.record.id);
      return { id: queued.record.id, state: "cancelled" };
    }
    id = queued.record.id;
  } else {
    const entry = findDeploy(cwd, ref);
    if (typeof entry === "string") throw new Error(entry);
    if (entry.status !== "running") throw new Error(finished(entry));
    id = entry.id;
  }
  if (!UUID.test(id)) throw new Error(`"${ref}" is not a deploy id`);
  const file = requestFile(cwd, id);
  ensurePrivateDir(resolve(cwd, CANCEL_DIR));
  const { by, actor } = request;
  writeFileAtomic(file, `${JSON.stringify({ id, by, actor, at: new Date().toISOString() })}\n`);
  try {
    const taken = await until(() => !existsSync(file), TAKE_MS);
    const ended = await until(() => endOf(cwd, id), taken ? END_MS : 0);
    if (ended && ended.status === "cancelled") return { id, state: "cancelled" };
    if (ended && watchCancelled(ended)) return { id, state: "cancelled", watchEnded: true };
    if (ended) throw new Error(finished(ended));
    if (taken) return { id, state: "stopping" };
    throw new Error(
      `deploy ${id} did not take the cancel within ${TAKE_MS / 1000} s: the process that holds it does not answer`,
    );
  } finally {
    rmSync(file, { force: true });
  }
}

/** A deploy whose watch a cancel ended: it went live, and stays. */
function watchCancelled(entry: HistoryEntry): boolean {
  const result = readDeployRecord(entry.jsonPath)?.result;
  return result !== undefined && "watch" in result && result.watch?.cancelled === true;
}

/** The deploy's record once it no longer runs nor waits. */
function endOf(cwd: string, id: string): HistoryEntry | undefined {
  if (findQueued(cwd, id)) return undefined;
  const entry = findDeploy(cwd, id);
  return typeof entry !== "string" && entry.status !== "running" ? entry : undefined;
}

function finished(entry: HistoryEntry): string {
  const how =
    entry.status === "done" ? (entry.ok ? (entry.rolledBack ? "rolled back" : "ok") : "failed") : entry.status;
  return `deploy ${entry.id} already finished (${how}): there is nothing to cancel`;
}

async function until<T>(check: () => T, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value || Date.now() >= end) return value || undefined;
    await new Promise((done) => setTimeout(done, 50));
  }
}
