/** A process run to its end with its output collected, killed if it outlives a bound (no test hangs on it). */

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `argv` until it exits (SIGKILL after `killAfterMs`); `stdin` is what it reads, else nothing. */
export async function runToEnd(
  argv: string[],
  options: { cwd: string; env: Record<string, string>; stdin?: Uint8Array; killAfterMs?: number },
): Promise<Finished> {
  const proc = Bun.spawn(argv, {
    cwd: options.cwd,
    env: options.env,
    stdin: options.stdin ?? "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), options.killAfterMs ?? 50_000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}
