/**
 * What the CLI prints besides deploys: an unknown command is one line like an unknown option, and help and
 * messages are plain text (no ANSI colours, no trailing padding) when stdout is not a terminal or NO_COLOR is
 * set. Terminal runs use util-linux `script` for a real pseudo-terminal.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { CLI, baseEnv, logFiles, runCli, SECRET, tempDir } from "../_support/helpers.ts";

const noPty = process.platform !== "linux" || Bun.which("script") === null;
/** The environment of a user's shell: colours are allowed unless something says otherwise. */
const COLOUR_ALLOWED = {
  NO_COLOR: undefined,
  CI: undefined,
  NODE_ENV: undefined,
  TEST: undefined,
  TERM: "xterm-256color",
  FORCE_COLOR: undefined,
};
const ANSI = "\x1b[";

const ptys = new Set<Bun.Subprocess>();
afterAll(() => {
  for (const proc of ptys) proc.kill("SIGKILL");
});

const shellQuote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/** Runs the CLI with its stdout (and stderr) on a pseudo-terminal; returns what the terminal got. */
async function runInPty(args: string[], env: Record<string, string | undefined>): Promise<string> {
  const command = `stty cols 200 rows 50; exec ${[...CLI, ...args].map(shellQuote).join(" ")}`;
  const proc = Bun.spawn(["script", "-qfec", command, "/dev/null"], {
    cwd: tempDir(),
    env: baseEnv(env),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  ptys.add(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
  const [out] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  clearTimeout(timer);
  ptys.delete(proc);
  return out.replace(/\r/g, "");
}

describe("an unknown command is one line and exit 1, like an unknown option", () => {
  test("service frobnicate: one line naming it and where help is, no usage, exit 1, nothing started", async () => {
    const cwd = tempDir();
    const { code, stdout, stderr } = await runCli(["frobnicate"], {
      cwd,
      env: { SERVICE_SECRET: SECRET, SERVICE_PORT: "0" },
      timeoutMs: 10_000,
    });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('unknown command "frobnicate"');
    expect(lines[0]).toContain("service --help");
    expect(stderr).not.toContain("USAGE");
    expect(logFiles(cwd)).toEqual([]);
  });
});

describe("plain text when stdout is not a terminal or NO_COLOR is set", () => {
  test("help piped: no ANSI colours and no trailing spaces, even with colours otherwise allowed", async () => {
    const cwd = tempDir();
    for (const args of [["--help"], ["deploy", "--help"], ["logs", "--help"], ["check", "--help"]]) {
      const { code, stdout } = await runCli(args, { cwd, env: COLOUR_ALLOWED });
      expect({ args, code }).toEqual({ args, code: 0 });
      expect(stdout).toContain("USAGE");
      expect(stdout).not.toContain(ANSI);
      expect(stdout.split("\n").filter((line) => line !== line.trimEnd())).toEqual([]);
      expect(stdout).toMatch(/\S\n$/);
    }
  });

  test("messages piped: an error is one plain line on stderr, without a badge or blank lines around it", async () => {
    const { code, stdout, stderr } = await runCli(["logs", "--bogus"], { cwd: tempDir(), env: COLOUR_ALLOWED });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).not.toContain(ANSI);
    expect(stderr.endsWith("\n")).toBe(true);
    expect(stderr.slice(0, -1).split("\n")).toEqual([
      expect.stringContaining("unknown option --bogus (see service logs --help)"),
    ]);
  });

  test.skipIf(noPty)(
    "in a terminal the help is coloured; with NO_COLOR set it is plain there too",
    async () => {
      const coloured = await runInPty(["--help"], COLOUR_ALLOWED);
      expect(coloured).toContain("USAGE");
      expect(coloured).toContain(ANSI);
      for (const value of ["1", "true"]) {
        const plain = await runInPty(["--help"], { ...COLOUR_ALLOWED, NO_COLOR: value });
        expect(plain).toContain("USAGE");
        expect(plain).not.toContain(ANSI);
        expect(plain.split("\n").filter((line) => line !== line.trimEnd())).toEqual([]);
      }
      const message = await runInPty(["logs", "--bogus"], { ...COLOUR_ALLOWED, NO_COLOR: "1" });
      expect(message).toContain("unknown option --bogus");
      expect(message).not.toContain(ANSI);
    },
    30_000,
  );
});
