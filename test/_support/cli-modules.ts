/**
 * The modules the CLI run from source loaded (test/_support/dump-modules.ts lists them on the way out), relative
 * to the project root: what the lazy-loading checks look at. The compiled binary holds one bundle, so these run
 * from source only.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, collect, ROOT, tempDir, waitFor } from "./helpers.ts";

/** The CLI run from source, listing the modules it loaded on its way out. */
export const CLI_LISTING_MODULES = [
  process.execPath,
  "--no-env-file",
  "--preload",
  join(ROOT, "test/_support/dump-modules.ts"),
  join(ROOT, "src/cli.ts"),
];

/**
 * The modules a server started from source in `cwd` loaded by the time its output (stdout and stderr; a pipe, so
 * plain) said `until` (by default its banner) and it stopped on SIGTERM.
 */
export async function modulesOfServer(
  cwd: string,
  env: Record<string, string>,
  until = "listening on",
): Promise<string[]> {
  const out = join(tempDir("service-modules-"), "modules.txt");
  const proc = Bun.spawn(CLI_LISTING_MODULES, {
    cwd,
    env: baseEnv({ ...env, SERVICE_TEST_MODULES_OUT: out }),
    stdout: "pipe",
    stderr: "pipe",
  });
  const output = { text: "" };
  void collect(proc.stdout, output);
  void collect(proc.stderr, output);
  try {
    await waitFor(() => output.text.includes(until) || proc.exitCode !== null, `"${until}" from the server`);
    if (!output.text.includes(until)) throw new Error(`the server exited before "${until}": ${output.text}`);
  } finally {
    // At once: the stop signals are handled before the banner is written, so the modules are listed on the way out.
    proc.kill("SIGTERM");
    await proc.exited;
  }
  return readFileSync(out, "utf8").split("\n");
}
