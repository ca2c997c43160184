import { readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { DeploymentInfo, RollbackTarget, Trigger } from "../types.ts";
import { ensurePrivateDir, readNoFollow, writeFileAtomic } from "../system/files.ts";
import { processAlive, OWN_START } from "../system/liveness.ts";
import type { PathsRecord } from "./record.ts";

/**
 * The requests (docs/deploy-control.md "Requests"): what was asked, kept from the moment it is acknowledged until its
 * record exists (a deploy that starts at once has its record before the answer: deploy/deployer.ts). One file per
 * waiting request, `.service/requests/<id>.json`, written atomically before the answer goes out,
 * so a process killed with -9 loses none (the kernel has the file; syncing it to the disk as well, against a power
 * cut, costs about 2.4 ms a request against 0.05 ms: docs/performance.md "Requests"): a `queued` request whose process died is replayed at the next
 * start (trigger `recovered`); a `kept` one was refused at the door by a pause or a freeze and waits for catch-up.
 * Beside the log directory rather than in it, so the log directory keeps exactly two files per deploy.
 */
export const REQUESTS_DIR = join(".service", "requests");

/** What a request named: nothing (the branch's tip when its turn comes), a commit, a ref, a deployment. */
export interface NamedInRequest {
  /** A deploy of a commit: a rollback, a ref, a tag, a deployment event's commit. */
  target?: RollbackTarget;
  /** The commit a push payload names as pushed (`after`): the tip deployed must be it or a descendant of it. */
  pushed?: string;
  /** A GitHub deployment event's deployment: its statuses are owed. */
  deployment?: DeploymentInfo;
  /** The forge's event and delivery id. */
  event?: string | null;
  delivery?: string | null;
}

export interface StoredRequest {
  id: string;
  /** `queued`: acknowledged, its deploy not started; `kept`: refused at the door by a pause or a freeze, for catch-up. */
  state: "queued" | "kept";
  app?: string;
  trigger: Trigger;
  /** Who asked for it (docs/log-files.md "Who deployed what"), and a person's provider subject. */
  actor: string | null;
  sub?: string;
  repoPath: string;
  /** When it was acknowledged (ISO). */
  at: string;
  /** Its place among the requests this process acknowledged: the order of two within one millisecond. */
  seq?: number;
  named: NamedInRequest;
  /** Why it passed the trigger rules: the `paths` that matched. */
  passed?: { paths?: PathsRecord };
  /** Asked of the deploy, as the record keeps them: never `force`, which is not replayed. */
  skipGate?: true;
  noCarry?: true;
  /** A kept request: why it was refused (`frozen until …`, `deploys are paused: …`). */
  reason?: string;
  /** The process that answered it, and its start time (see liveness.ts); `cli` for `service deploy`. */
  pid: number;
  pidStart: string;
  cli?: true;
}

const FILE = /^([0-9a-f-]{36})\.json$/;
const dirOf = (cwd: string) => resolve(cwd, REQUESTS_DIR);

function read(file: string): StoredRequest | undefined {
  try {
    const request = JSON.parse(readNoFollow(file)) as StoredRequest;
    const valid =
      request &&
      (request.state === "queued" || request.state === "kept") &&
      typeof request.id === "string" &&
      typeof request.trigger === "string" &&
      typeof request.at === "string" &&
      typeof request.pid === "number" &&
      request.named !== null &&
      typeof request.named === "object";
    return valid ? request : undefined;
  } catch {
    return undefined;
  }
}

/** Whether any request is stored: a start without any loads no replay. */
export function hasStoredRequests(cwd: string): boolean {
  try {
    return readdirSync(dirOf(cwd)).some((name) => FILE.test(name));
  } catch {
    return false;
  }
}

/** Every stored request, oldest first (by the time it was acknowledged). */
export function storedRequests(cwd: string): StoredRequest[] {
  const dir = dirOf(cwd);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .flatMap((name) => {
      if (!FILE.test(name)) return [];
      const request = read(join(dir, name));
      return request ? [request] : [];
    })
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : (a.seq ?? 0) - (b.seq ?? 0)));
}

/** How many requests this process has stored: each one's `seq`. */
let stored = 0;

/** Whether the process that holds a queued request still runs: if not, its deploy will never start there. */
export const holderRunning = (request: Pick<StoredRequest, "pid" | "pidStart">) =>
  processAlive(request.pid, request.pidStart);

/**
 * Writes a request before it is answered. Returns why it could not be written (a full disk, a
 * directory not writable): the deploy goes on in this process, and its log says a crash would lose it.
 */
export function storeRequest(
  cwd: string,
  request: Omit<StoredRequest, "pid" | "pidStart" | "at"> & { at?: string },
): string | undefined {
  try {
    const dir = dirOf(cwd);
    ensurePrivateDir(dir);
    const kept: StoredRequest = {
      at: new Date().toISOString(),
      seq: ++stored,
      ...request,
      pid: process.pid,
      pidStart: OWN_START,
    };
    writeFileAtomic(join(dir, `${request.id}.json`), `${JSON.stringify(kept, null, 2)}\n`);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The request has its record now (its deploy started, or it ended without running): it is no longer kept here. */
export function dropRequest(cwd: string, id: string): void {
  try {
    rmSync(resolve(cwd, REQUESTS_DIR, `${id}.json`), { force: true });
  } catch {}
}

/** The queued requests whose id starts with `prefix` (`service logs <id>` of a deploy that waits). */
export function queuedDeploys(cwd: string, prefix: string): StoredRequest[] {
  const needle = prefix.toLowerCase();
  return storedRequests(cwd).filter((request) => request.state === "queued" && request.id.startsWith(needle));
}

/** The kept requests of `app` (undefined: the single app), oldest first. */
export function keptRequests(cwd: string, app: string | undefined): StoredRequest[] {
  return storedRequests(cwd).filter((request) => request.state === "kept" && request.app === app);
}

/**
 * The queued requests no process will run: their process died before their deploy started (kill -9, out of memory,
 * power). The server's start replays them; `service deploy`'s own are not its to replay.
 */
export function orphanedRequests(cwd: string): StoredRequest[] {
  return storedRequests(cwd).filter((request) => request.state === "queued" && !holderRunning(request));
}
