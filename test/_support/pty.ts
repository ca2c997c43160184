/**
 * The server CLI on a real pseudo-terminal (util-linux `script`), for the interactive HTTPS question: what the
 * terminal shows, keystrokes typed into it, the banner waited for. Linux only (`noPty` says where it is not).
 */
import { afterRun } from "./after-run.ts";
import { existsSync, readFileSync } from "node:fs";
import { baseEnv, CLI, SECRET, waitFor } from "./helpers.ts";

/** No pseudo-terminal here: not Linux, or no `script` (the question is Linux-only; `script -qfec` is util-linux). */
export const noPty = process.platform !== "linux" || Bun.which("script") === null;

/** Pseudo-terminal sessions still open; killed at the end even when a test timed out before its cleanup. */
const ptys = new Set<Bun.Subprocess>();
afterRun(() => {
  for (const proc of ptys) proc.kill("SIGKILL");
});

/** Strips terminal control sequences and carriage returns from what a pseudo-terminal showed. */
export const plain = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r/g, "");

const shellQuote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
const readIfThere = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : "");

export interface PtyOptions {
  /** Columns of the terminal; 0 is a terminal that reports no size. 120 unless told. */
  cols?: number;
  /** Sends the CLI's output to this file instead of the terminal (stdin stays the terminal). */
  stdoutTo?: string;
  /** The CLI's arguments (none: the server). */
  args?: string[];
}

/**
 * Starts the server CLI with a pseudo-terminal as stdin and stdout (`script` allocates it; `stty` gives it a
 * size so prompts render as on a terminal), on port 0 with SECRET, asking the HTTPS question unless `env` sets
 * SERVICE_SKIP_HTTPS_PROMPT. Keystrokes go through `type`. `await using pty = startInPty(…)` stops it when the
 * block ends.
 */
export function startInPty(cwd: string, env: Record<string, string | undefined> = {}, options: PtyOptions = {}) {
  const cols = options.cols ?? 120;
  const redirect = options.stdoutTo ? ` > ${shellQuote(options.stdoutTo)} 2>&1` : "";
  const command = `stty cols ${cols} rows ${cols === 0 ? 0 : 40}; exec ${[...CLI, ...(options.args ?? [])].map(shellQuote).join(" ")}${redirect}`;
  const proc = Bun.spawn(["script", "-qfec", command, "/dev/null"], {
    cwd,
    env: baseEnv({ SERVICE_PORT: "0", SERVICE_SECRET: SECRET, SERVICE_SKIP_HTTPS_PROMPT: undefined, ...env }),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  ptys.add(proc);
  void proc.exited.then(() => ptys.delete(proc));
  const out = { text: "" };
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) out.text += decoder.decode(chunk, { stream: true });
  })();
  /** What the user sees; with `stdoutTo`, what went to that file. */
  const screen = () => plain(options.stdoutTo ? readIfThere(options.stdoutTo) : out.text);
  const type = (keys: string) => {
    proc.stdin.write(keys);
    proc.stdin.flush();
  };
  /** Ctrl-C through the terminal (a graceful stop), then a hard kill if it is still there after 3 s. */
  const stop = async () => {
    if (proc.exitCode === null) {
      type("\x03");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 3_000);
      await proc.exited;
      clearTimeout(timer);
    }
  };
  return {
    proc,
    screen,
    type,
    /** The port of the banner, once it is there. */
    banner: () =>
      waitFor(() => {
        if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}: ${screen()}`);
        const match = /listening on http:\/\/localhost:(\d+)/.exec(screen());
        return match ? Number(match[1]) : undefined;
      }, "the server banner"),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

export type Pty = ReturnType<typeof startInPty>;

/** The HTTPS question as one line of the screen. */
export const HTTPS_QUESTION_LINE = /^.*HTTPS.*\?.*$/m;

/** Answers the question with yes and a domain, declines the Caddy offer if it comes, and returns the screen. */
export async function setUpHttps(pty: Pty, domain = "deploy.example.com"): Promise<string> {
  await waitFor(() => HTTPS_QUESTION_LINE.test(pty.screen()), "the HTTPS question");
  pty.type("y");
  await waitFor(() => /domain name/i.test(pty.screen()), "the domain question");
  pty.type(`${domain}\r`);
  // Where Caddy is installed and writable, the offer to install comes next: decline it.
  await waitFor(() => /Caddy is installed here|listening on http:/.test(pty.screen()), "the offer or the banner");
  if (/Caddy is installed here/.test(pty.screen())) pty.type("n");
  await pty.banner();
  return pty.screen();
}
