/**
 * Helpers for the operations tests (history, retention, redaction, check): a CLI process read while it runs,
 * the `service logs` table parsed into rows, the deploy ids a CLI deploy printed.
 */
import { afterRun } from "./after-run.ts";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, CLI, collect } from "./helpers.ts";

export interface RunningCli {
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  stdout: { text: string };
  stderr: { text: string };
  /** Resolves with the exit code once the process ended and its output was read. */
  exited: Promise<number>;
  /** `await using cli = spawnCli(…)`: killed (SIGKILL) and waited for when the block ends, if still running. */
  [Symbol.asyncDispose](): Promise<void>;
}

const spawned = new Set<RunningCli>();
afterRun(() => {
  for (const cli of spawned) cli.proc.kill("SIGKILL");
});

/** Starts the real CLI and collects its output while it runs (for `logs --follow`). */
export function spawnCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): RunningCli {
  const proc = Bun.spawn([...CLI, ...args], {
    cwd: options.cwd,
    env: baseEnv(options.env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout = { text: "" };
  const stderr = { text: "" };
  const reading = Promise.all([collect(proc.stdout, stdout), collect(proc.stderr, stderr)]);
  const exited = (async () => {
    const code = await proc.exited;
    await reading;
    return code;
  })();
  const cli: RunningCli = {
    proc,
    stdout,
    stderr,
    exited,
    async [Symbol.asyncDispose]() {
      proc.kill("SIGKILL");
      await exited;
    },
  };
  spawned.add(cli);
  void exited.then(() => spawned.delete(cli));
  return cli;
}

/** The deploy id of a `service deploy` run, from its `[deploy] <id> started` line. */
export function deployIdOf(output: string): string {
  const id = /\[deploy\] ([0-9a-f-]{36}) started/.exec(output)?.[1];
  if (!id) throw new Error(`no [deploy] line in:\n${output}`);
  return id;
}

export type Row = Record<string, string>;

/** The `service logs` table as rows keyed by header; cells are separated by two or more spaces. */
export function parseTable(text: string): Row[] {
  const lines = text.trimEnd().split("\n");
  const header = lines[0]!;
  // Column starts come from the header: cells may be empty (the NOTE column) but never shift.
  const names = header.split(/ {2,}/);
  const starts = names.map((name) => header.indexOf(name));
  return lines.slice(1).map((line) => {
    const row: Row = {};
    names.forEach((name, i) => {
      row[name] = line.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : undefined).trim();
    });
    return row;
  });
}

export const logDirOf = (cwd: string) => join(cwd, ".service", "logs");

/** The stem (`<date>_<time>Z_<id>`) of the deploy `id` in `cwd`, from the file names on disk. */
export function stemOf(cwd: string, id: string): string {
  const name = readdirSync(logDirOf(cwd)).find((n) => n.endsWith(`_${id}.json`) || n.endsWith(`_${id}.log`));
  if (!name) throw new Error(`no log files for deploy ${id}`);
  return name.replace(/\.(json|log)$/, "");
}

/** Copies a deploy's two files under another stem (a fake older deploy); returns the new stem. */
export function copyPair(cwd: string, stem: string, newStem: string): string {
  for (const ext of [".json", ".log"])
    copyFileSync(join(logDirOf(cwd), `${stem}${ext}`), join(logDirOf(cwd), `${newStem}${ext}`));
  return newStem;
}

/** The stems present in `cwd`'s log directory, each once, sorted by name. */
export function stems(cwd: string): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(logDirOf(cwd));
  } catch {}
  return [...new Set(names.filter((n) => /\.(json|log)$/.test(n)).map((n) => n.replace(/\.(json|log)$/, "")))].sort();
}

/**
 * The running record of a deploy of the process `pid` whose .log is not created yet (the instant between the two
 * files), written by hand in `cwd`; returns the deploy's id.
 */
export function runningRecordAlone(cwd: string, pid: number): string {
  const id = crypto.randomUUID();
  const startedAt = new Date();
  mkdirSync(logDirOf(cwd), { recursive: true, mode: 0o700 });
  const record = { status: "running", id, trigger: "cli", actor: "cli:test", event: null, delivery: null };
  writeFileSync(
    join(logDirOf(cwd), `${stemDate(startedAt)}_${id}.json`),
    JSON.stringify({ ...record, repoPath: cwd, runScript: "true", startedAt: startedAt.toISOString(), pid }),
  );
  return id;
}

/** `YYYY-MM-DD_HH-mm-ssZ` for a date: the start of a log file stem. */
export function stemDate(date: Date): string {
  const iso = date.toISOString();
  return `${iso.slice(0, 10)}_${iso.slice(11, 19).replaceAll(":", "-")}Z`;
}

export const readText = (file: string) => readFileSync(file, "utf8");
