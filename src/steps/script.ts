import { existsSync } from "node:fs";
import type { StopReport } from "../system/groups.ts";
import { runProcess, scriptLimits, type Leftovers, type ProcessExit, type ScriptLimits } from "../system/process.ts";
import type { RunResult, Step } from "../types.ts";
import type { DeployContext } from "./context.ts";

/** Words that only mean something to a shell (builtins and keywords): such a line goes through `sh -c`. */
const SHELL_WORDS = new Set([
  ".",
  ":",
  "alias",
  "bg",
  "break",
  "case",
  "cd",
  "command",
  "continue",
  "eval",
  "exec",
  "exit",
  "export",
  "fg",
  "for",
  "function",
  "getopts",
  "hash",
  "if",
  "jobs",
  "read",
  "readonly",
  "return",
  "select",
  "set",
  "shift",
  "source",
  "times",
  "trap",
  "type",
  "ulimit",
  "umask",
  "unalias",
  "unset",
  "until",
  "wait",
  "while",
]);

/** Operators, expansions, globs, redirections, comments and escapes: anything a direct spawn would not honour. */
const SHELL_CHARS = /[|&;<>()$`\\*?[\]{}~#!\n]/;
/** Inside double quotes a shell still expands these. */
const DOUBLE_QUOTED_SHELL_CHARS = /[$`\\]/;
/** A shell splits words on these (IFS), not on every Unicode space. */
const BLANK = /[ \t\n]/;

/** The lines of a run script that run, in order: blank lines and `#` comments skipped. */
export function scriptLines(script: string): string[] {
  return script
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

/** Splits a line into words as a shell would for a simple command: quotes respected, no expansion. */
export function splitWords(line: string): string[] | undefined {
  const words: string[] = [];
  let current = "";
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = undefined;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (BLANK.test(ch)) {
      if (inWord) words.push(current);
      current = "";
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quote) return undefined;
  if (inWord) words.push(current);
  return words;
}

/**
 * True when a shell would do more with the line than split it into words. Scanned with the quoting state,
 * because a regex cannot tell `'` inside double quotes from a real quote (`echo "'" | cat "'"` is a pipe).
 * An unterminated quote also counts: the shell then reports the syntax error in its own words.
 */
function hasShellSyntax(line: string): boolean {
  let quote: '"' | "'" | undefined;
  for (const ch of line) {
    if (quote === "'") {
      if (ch === "'") quote = undefined;
    } else if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (DOUBLE_QUOTED_SHELL_CHARS.test(ch)) return true;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
    } else if (SHELL_CHARS.test(ch)) {
      return true;
    }
  }
  return quote !== undefined;
}

/**
 * How one line runs: through the system shell when it has shell operators, expansions, an assignment or a
 * builtin; otherwise spawned directly with its words as arguments.
 */
export function planLine(line: string): { argv: string[]; shell: boolean } {
  const shell = { argv: ["/bin/sh", "-c", line], shell: true };
  if (hasShellSyntax(line)) return shell;
  const words = splitWords(line);
  if (!words || words.length === 0) return shell;
  const first = words[0]!;
  if (SHELL_WORDS.has(first) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(first)) return shell;
  return { argv: words, shell: false };
}

export interface ScriptOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  timeoutMs: number;
  onOutput: (stream: "stdout" | "stderr", data: Uint8Array) => void;
  /** Called before each line starts, with the line as written. */
  onLine?: (line: string) => void;
  /** Each line must leave nothing running (see ProcessOptions.leaveNothing). */
  leaveNothing?: string[];
  /** The deploy's `limits` (limits.ts): each line joins its group and takes its priority first. */
  limits?: ScriptLimits;
}

export interface ScriptExit extends ProcessExit {
  /** The line that failed (non-zero, timed out or could not start). */
  failedLine?: string;
}

/**
 * Runs a run script line by line, stopping at the first line that does not exit 0. `timeoutMs` bounds the
 * whole script, not each line.
 */
export async function runScript(script: string, options: ScriptOptions): Promise<ScriptExit> {
  if (!existsSync(options.cwd)) {
    return {
      exitCode: null,
      timedOut: false,
      error: `cannot start the run script: directory ${options.cwd} does not exist`,
    };
  }
  const deadline = Date.now() + options.timeoutMs;
  let outcome: ProcessExit = { exitCode: 0, timedOut: false };
  const left: Leftovers[] = [];
  const withLeft = (exit: ProcessExit): ProcessExit => {
    if (exit.left) left.push(exit.left);
    const { left: _, ...rest } = exit;
    return left.length ? { ...rest, left: mergeLeftovers(left) } : rest;
  };
  for (const line of scriptLines(script)) {
    options.onLine?.(line);
    const start = () => runProcess(planLine(line).argv, { ...options, deadline });
    outcome = withLeft(await (options.limits ? scriptLimits.run(options.limits, start) : start()));
    if (outcome.exitCode !== 0) return { ...outcome, failedLine: line };
  }
  return outcome;
}

/** What the lines of one script left, as one report (the first line's group named). */
function mergeLeftovers(all: Leftovers[]): Leftovers {
  return {
    pgid: all[0]!.pgid,
    members: all.flatMap((l) => l.members),
    outside: all.flatMap((l) => l.outside),
    stopped: all.every((l) => l.stopped),
  };
}

/** Names at most LISTED processes: a script that forked thousands still gets a one-line report. */
const LISTED = 10;
const listed = (processes: { pid: number; command: string }[]) =>
  processes
    .slice(0, LISTED)
    .map((p) => `${p.pid} (${p.command})`)
    .join(", ") + (processes.length > LISTED ? ` and ${processes.length - LISTED} more` : "");

/**
 * The timeout line: exactly what was stopped. The kill reaches the line's process group only; a child that
 * called setsid (or daemonized) left it and keeps running. Under systemd, `KillMode=control-group` stops
 * those with the service (see the README).
 */
export function describeTimeout(timeoutMs: number, stopped: StopReport | undefined): string {
  const head = `timed out after ${timeoutMs} ms (runTimeoutMs)`;
  if (!stopped) return `${head}; stopped the script's process group`;
  const { pgid, members, outside } = stopped;
  const names = [...new Set(members.map((m) => m.command))];
  const commands = names.slice(0, LISTED).join(", ") + (names.length > LISTED ? ", …" : "");
  const count = members.length === 1 ? "1 process" : `${members.length} processes`;
  let text = `${head}; stopped process group ${pgid}${members.length ? ` (${count}: ${commands})` : ""}`;
  if (outside.length)
    text += `; not stopped: ${listed(outside)}, started by this deploy but outside its process group (setsid or a daemon)`;
  return text;
}

/** What a command that must leave nothing behind had left running: its group's processes and those outside it. */
export function describeLeftovers(left: Leftovers): string {
  const { pgid, members, outside } = left;
  const parts: string[] = [];
  if (members.length) {
    const names = [...new Set(members.map((m) => m.command))];
    const commands = names.slice(0, LISTED).join(", ") + (names.length > LISTED ? ", …" : "");
    parts.push(
      `process group ${pgid} (${members.length === 1 ? "1 process" : `${members.length} processes`}: ${commands})`,
    );
  }
  if (outside.length) parts.push(`${listed(outside)} outside its process group (setsid or a daemon)`);
  return parts.join("; ");
}

/** How one run of the script went, without its output (kept by the caller). */
export type StepRun = Omit<RunResult, "stdout" | "stderr"> & { error?: string; killedBy?: "memory" | "tasks" };

/** The line of a script killed for `limits`: the kernel's out-of-memory kill, or `tasks` reached. */
export const killedText = (
  limits: { memoryText: string; tasks: number | undefined } | undefined,
  by: "memory" | "tasks",
) =>
  by === "memory"
    ? `killed: out of memory (limit ${limits?.memoryText ?? "?"})`
    : `killed: task limit (${limits?.tasks ?? "?"}) reached`;

/** Why a run of the script failed, when it did not exit non-zero on its own (it could not start, it timed out). */
export function describeFailure(run: StepRun): string | null {
  if (run.error) return run.error;
  if (run.timedOut) return `run script timed out`;
  return null;
}

/**
 * The run stage: the run script in repoPath, each line said before it runs, and how it ended. With releases,
 * `at` runs it (or the activate script) in another directory.
 */
export async function scriptStep(
  ctx: DeployContext,
  name: Step,
  onOutput: (stream: "stdout" | "stderr", data: Uint8Array) => void,
  at: { cwd?: string; script?: string; env?: Record<string, string | undefined> } = {},
): Promise<StepRun> {
  const { config, run } = ctx;
  const script = at.script ?? config.runScript;
  const started = Date.now();
  const outcome = await runScript(script, {
    cwd: at.cwd ?? config.repoPath,
    env: at.env ?? ctx.env,
    timeoutMs: config.runTimeoutMs,
    onOutput,
    onLine: (line) => run.step(name, `$ ${line}`),
    ...(ctx.limits ? { limits: ctx.limits } : {}),
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const { killedBy } = outcome;
  const killed = killedBy ? killedText(ctx.limits, killedBy) : undefined;
  if (outcome.error) run.step(name, outcome.error);
  else if (killed) run.step(name, `${killed}; exit code ${outcome.exitCode} after ${seconds} s`);
  else if (outcome.timedOut) run.step(name, describeTimeout(config.runTimeoutMs, outcome.stopped));
  else run.step(name, `exit code ${outcome.exitCode} after ${seconds} s`);
  return {
    exitCode: outcome.exitCode,
    timedOut: outcome.timedOut,
    script,
    ...(outcome.error ? { error: outcome.error } : killed ? { error: killed, killedBy } : {}),
  };
}
