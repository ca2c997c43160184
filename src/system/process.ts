import { AsyncLocalStorage } from "node:async_hooks";
import { existsSync, statSync } from "node:fs";
import { constants } from "node:os";
import { delimiter, resolve } from "node:path";
import { runtime } from "#runtime";
import type { Child } from "../runtime/types.ts";
import { collectGarbage } from "../runtime/gc.ts";
import { deployGroups, groupOf, snapshot, stopLeftovers, type StopReport } from "./groups.ts";

/** What a deploy's limits do to a script it starts (steps/limits.ts): wrap its command, count what the kernel did. */
export interface ScriptLimits {
  /** The command started so that it joins the deploy's group and takes its priority before it runs anything. */
  wrap(argv: string[]): string[];
  /** What the kernel did to the deploy's processes so far: killed for memory, forks refused at `tasks`. */
  counts(): { memory: number; tasks: number };
  /** The `tasks` limit, when the deploy's group has one: a script that reaches it is killed. */
  readonly tasks: number | undefined;
}

/** How often a running script's refused forks are looked at, under a `tasks` limit. */
const TASKS_LOOK_MS = 100;

/** The limits of the script running in the current async context (steps/script.ts sets them around it). */
export const scriptLimits = new AsyncLocalStorage<ScriptLimits>();

/** How long a process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 3000;
/** After the process exits, how long its pipes may still deliver output (from children it left behind). */
const DRAIN_MS = 250;

export interface ProcessOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  /** Absolute time (Date.now()) at which the whole process group is killed. */
  deadline: number;
  onOutput: (stream: "stdout" | "stderr", data: Uint8Array) => void;
  /**
   * For a command that must leave nothing running (a health check): once it exits, its process group and the
   * processes outside it whose environment carries all of these `NAME=value` markers are stopped, and reported
   * as `left`. Unset: what a command leaves in the background is its business (`nohup app &`).
   */
  leaveNothing?: string[];
}

/** What a command run with `leaveNothing` had left running when it exited, and whether all of it was stopped. */
export interface Leftovers extends StopReport {
  stopped: boolean;
}

export interface ProcessExit {
  /** Exit code; 128 + signal number when killed by a signal; null when it could not be started. */
  exitCode: number | null;
  timedOut: boolean;
  /** After a timeout: what the kill reached, and what it could not. */
  stopped?: StopReport;
  /** Why it could not be started. */
  error?: string;
  /** With `leaveNothing`: what it had left running (only when it left something). */
  left?: Leftovers;
  /**
   * Under a deploy's `limits`: the kernel killed it (or a process of it) for memory, or it reached `tasks` (a fork
   * refused), and was killed for it.
   */
  killedBy?: "memory" | "tasks";
}

/**
 * The commands one owner (a deployer) is running, so that it can stop their process trees: a shutdown, Ctrl-C
 * during `service deploy`. Each owner has its own: two servers in one process never stop each other's deploys.
 */
export class RunningProcesses {
  private readonly pids = new Set<number>();
  private stopping: NodeJS.Signals | undefined;
  /** Aborted by the next signal: a step that waits without a command (the health check's GET and pauses) ends then too. */
  private interrupt = new AbortController();

  /** `parent` also owns every command of this one: one deploy's commands, within its deployer's. */
  constructor(private readonly parent?: RunningProcesses) {}

  /** Whether `pid` still runs here (a command of this owner that has not exited). */
  has(pid: number): boolean {
    return this.pids.has(pid);
  }

  /** The commands running now. */
  running(): number[] {
    return [...this.pids];
  }

  /** Runs `task` so that every command it starts belongs to this owner. */
  own<T>(task: () => T): T {
    return owners.run(this, task);
  }

  /** Sends `signal` to the process group of every running command; the deploys go on to their next step. */
  signal(signal: NodeJS.Signals): void {
    for (const pid of this.pids) killGroup(pid, signal);
    const interrupt = this.interrupt;
    // The steps after this one (a rollback) start with a fresh one, as their commands do.
    this.interrupt = new AbortController();
    interrupt.abort();
  }

  /** Aborted when this owner's commands are next signalled (Ctrl-C, a forced stop); while stopping, already aborted. */
  get interrupted(): AbortSignal {
    if (this.stopping) return AbortSignal.abort();
    // A deploy's own set is interrupted by its deployer's signals too (Ctrl-C reaches the deployer).
    return this.parent ? AbortSignal.any([this.interrupt.signal, this.parent.interrupted]) : this.interrupt.signal;
  }

  /**
   * Sends `signal` to every running group and to each one that starts until `resume()`: a forced stop must not
   * wait for what a failed deploy runs next (a rollback's run script).
   */
  stopAll(signal: NodeJS.Signals): void {
    this.stopping = signal;
    this.signal(signal);
  }

  resume(): void {
    this.stopping = undefined;
  }

  started(pid: number): void {
    this.pids.add(pid);
    this.parent?.started(pid);
    if (this.stopping) killGroup(pid, this.stopping);
  }

  ended(pid: number): void {
    this.pids.delete(pid);
    this.parent?.ended(pid);
  }
}

/** The owner of the commands started in the current async context (a deployer sets it around each deploy). */
const owners = new AsyncLocalStorage<RunningProcesses>();

/** The owner of the commands started here, if any: a set of commands of its own can be its child. */
export const currentOwner = (): RunningProcesses | undefined => owners.getStore();

/** What interrupts a wait of the current deploy (see RunningProcesses.interrupted); never, outside a deployer. */
export function deployInterrupted(): AbortSignal {
  return owners.getStore()?.interrupted ?? new AbortController().signal;
}

/**
 * Kills a process group (the process and every descendant that kept it), ignoring a group already gone. Only
 * the group: every command is spawned as a group leader, so when the group is gone its pid is no longer ours
 * (it may be reaped and reused by an unrelated process).
 */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {}
}

/**
 * An executable file without a `#!` line (ENOEXEC) is a shell script to a shell (POSIX execvp falls back
 * to `sh file args`); posix_spawn refuses it, so do the fallback here.
 */
function shellFallback(argv: string[], options: ProcessOptions): string[] {
  const [command = "", ...args] = argv;
  return ["/bin/sh", command.includes("/") ? command : (which(command, options) ?? command), ...args];
}

/** The file PATH finds for `command`, as the shell would. */
function which(command: string, options: ProcessOptions): string | undefined {
  for (const dir of (options.env.PATH ?? "").split(delimiter)) {
    const file = resolve(options.cwd, dir || ".", command);
    if (existsSync(file) && statSync(file).isFile()) return file;
  }
  return undefined;
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Runs one command in its own process group, streaming its output. At the deadline the whole group gets
 * SIGTERM, then SIGKILL after a grace. Children it leaves running in the background (an app restarted with
 * `nohup … &`, or `app &` that keeps the pipes) do not hold the deploy: once the command exits, its pipes
 * are drained briefly, then still read but no longer part of the deploy, so such a child never blocks on a
 * full pipe nor dies of EPIPE while the server lives. (The `deploy` command exits explicitly when its deploy
 * is done; a child that keeps writing to its pipes after that gets EPIPE, so long-running apps should
 * redirect their output.)
 */
export async function runProcess(argv: string[], options: ProcessOptions): Promise<ProcessExit> {
  let proc: Child;
  const limits = scriptLimits.getStore();
  const before = limits?.counts();
  try {
    proc = await runtime.spawn(limits ? limits.wrap(argv) : argv, { cwd: options.cwd, env: options.env });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOEXEC" && argv[0] !== "/bin/sh") return runProcess(shellFallback(argv, options), options);
    const reason =
      code === "ENOENT" ? "command not found" : code === "EACCES" ? "permission denied" : (error as Error).message;
    return { exitCode: null, timedOut: false, error: `cannot start "${argv[0]}": ${reason}` };
  }
  const pid = proc.pid;
  const owner = owners.getStore();
  owner?.started(pid);
  // Named in the deploy's queue ticket while it runs: if this process dies, the next deploy stops the group.
  const recorder = deployGroups.getStore();
  recorder?.started(groupOf(pid));
  let forwarding = true;
  const pump = async (name: "stdout" | "stderr", stream: ReadableStream<Uint8Array>) => {
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        if (forwarding) options.onOutput(name, value);
        collectGarbage(value.length);
      }
    } catch {
      // A pipe error ends this stream's output; the exit code still decides the outcome.
    }
  };
  const pumps = Promise.all([pump("stdout", proc.stdout), pump("stderr", proc.stderr)]);

  // A script that reaches `tasks` (a fork bomb, a build spawning without end) is stopped there, not at its timeout.
  let reachedTasks = false;
  const tasksLook =
    limits?.tasks !== undefined && before
      ? setInterval(() => {
          if (limits.counts().tasks <= before.tasks) return;
          reachedTasks = true;
          killGroup(pid, "SIGKILL");
          clearInterval(tasksLook);
        }, TASKS_LOOK_MS)
      : undefined;
  let timedOut = false;
  let stopped: StopReport | undefined;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const timeoutTimer = setTimeout(
    () => {
      timedOut = true;
      stopped = snapshot(pid, deployMarkers(options));
      killGroup(pid, "SIGTERM");
      killTimer = setTimeout(() => killGroup(pid, "SIGKILL"), KILL_GRACE_MS);
    },
    Math.max(0, options.deadline - Date.now()),
  );
  let ended: Awaited<Child["exited"]>;
  let left: Leftovers | undefined;
  try {
    ended = await proc.exited;
    if (timedOut) {
      // The leader is gone; make sure nothing of its group outlives the timeout.
      killGroup(pid, "SIGKILL");
    }
    // Still named in the ticket while it is stopped: a crash meanwhile leaves it to the next deploy to stop.
    if (options.leaveNothing) left = await stopLeftovers(pid, options.leaveNothing, KILL_GRACE_MS);
    await Promise.race([pumps, sleep(DRAIN_MS)]);
  } finally {
    clearTimeout(timeoutTimer);
    clearInterval(tasksLook);
    if (killTimer) clearTimeout(killTimer);
    forwarding = false;
    owner?.ended(pid);
    recorder?.ended(pid);
  }
  const signal = ended.signal as NodeJS.Signals | null;
  const exitCode = ended.exitCode ?? (signal ? 128 + (constants.signals[signal] ?? 0) : null);
  const killedBy = exitCode !== 0 && before ? limitReached(before, limits!.counts(), reachedTasks) : undefined;
  return {
    exitCode,
    timedOut,
    ...(stopped ? { stopped } : {}),
    ...(left ? { left } : {}),
    ...(killedBy ? { killedBy } : {}),
  };
}

/** Which limit ended a script that failed, from the kernel's counts before and after it. */
function limitReached(
  before: { memory: number; tasks: number },
  after: { memory: number; tasks: number },
  reachedTasks: boolean,
): "memory" | "tasks" | undefined {
  if (after.memory > before.memory) return "memory";
  return reachedTasks || after.tasks > before.tasks ? "tasks" : undefined;
}

/** The markers that find a command's processes outside its group: its own, else its deploy's. */
function deployMarkers(options: ProcessOptions): string[] {
  if (options.leaveNothing) return options.leaveNothing;
  const id = options.env.SERVICE_DEPLOY_ID;
  return id ? [`SERVICE_DEPLOY_ID=${id}`] : [];
}
