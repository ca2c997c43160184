/**
 * The problems `service check` lists, said by the server once it listens. They are asked of `service check
 * --problems` in a process of its own, its output written to files the server reads when it ends: neither the
 * check's code (and what it loads to look at every repository) nor a pipe's stream becomes part of the server's
 * memory (2 MB of its idle memory: docs/performance.md).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { runtime } from "#runtime";
import { ensurePrivateDir, readNoFollow } from "../system/files.ts";
import { selfCommand } from "../system/self.ts";

/** The problems of the configuration in `cwd`, and a last one when the check itself could not say them all. */
export async function startCheck(cwd = process.cwd()): Promise<string[]> {
  const dir = join(cwd, ".service");
  const into = {
    stdout: join(dir, `start-check-${process.pid}.out`),
    stderr: join(dir, `start-check-${process.pid}.err`),
  };
  let code: number | null;
  let out = "";
  let err = "";
  try {
    ensurePrivateDir(dir);
    code = await runtime.runWritingFiles([...selfCommand(), "check", "--problems"], { cwd, env: process.env, into });
    out = readNoFollow(into.stdout);
    err = readNoFollow(into.stderr);
  } catch (error) {
    return [`the start check did not run: ${(error as Error).message}`];
  } finally {
    for (const file of [into.stdout, into.stderr]) {
      try {
        rmSync(file, { force: true });
      } catch {}
    }
  }
  const problems = problemsOf(out);
  // Exit 1 with no problem listed is the CLI's own failure: its one line on stderr says why.
  if (code === 0 || (code === 1 && problems.length > 0)) return problems;
  const said = err.trim().split("\n").at(-1);
  return [
    ...problems,
    `the start check did not finish: ${said || (code === null ? "killed by a signal" : `exit code ${code}`)}`,
  ];
}

/** `service check --problems`' output: one problem a line, a problem's further lines indented by two spaces. */
export const problemLines = (problems: string[]): string =>
  problems.map((problem) => `${problem.replaceAll("\n", "\n  ")}\n`).join("");

/** The problems `problemLines` wrote. */
function problemsOf(out: string): string[] {
  const problems: string[] = [];
  for (const line of out.split("\n")) {
    if (line.startsWith("  ") && problems.length > 0) problems[problems.length - 1] += `\n${line.slice(2)}`;
    else if (line) problems.push(line);
  }
  return problems;
}
