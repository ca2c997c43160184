/**
 * README "Quick start", run as the README gives it (read from its fenced block, so the two cannot drift): the
 * repository lines in a temp dir instead of /tmp/app, the service started in that repository (on a free port:
 * other tests run beside this one), the banner the README shows, and its curl deploy.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { docBlock } from "../_support/doc-snippets.ts";
import { baseEnv, runCli, startServer, tempDir, waitFor } from "../_support/helpers.ts";

const curl = Bun.which("curl");

/** Runs `script` with sh in `cwd`; its output, or a failure naming it. */
function sh(script: string, cwd: string): string {
  const result = Bun.spawnSync(["sh", "-ec", script], { cwd, env: baseEnv(), stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`${script}\nfailed: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

/** The `#   ` lines right under line `at` of `lines` (what the README shows a command printing), unprefixed. */
function shownUnder(lines: string[], at: number): string[] {
  const shown: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (!line.startsWith("#   ")) break;
    shown.push(line.slice(4));
  }
  return shown;
}

describe('README "Quick start", as written', () => {
  test.skipIf(!curl)(
    "its service.yaml keeps the service on loopback: the banner is the README's (bound to loopback) and the curl deploy ends ok",
    async () => {
      const lines = docBlock("README.md", "sh", "Quick start").split("\n");
      const dir = tempDir("service-quick-start-");
      const app = join(dir, "app");
      const here = (text: string) => text.replaceAll("/tmp/app", app);

      const repoAt = lines.findIndex((line) => line.startsWith("# a repository to deploy"));
      const startAt = lines.indexOf("SERVICE_SKIP_HTTPS_PROMPT=1 service &");
      expect(repoAt).toBeGreaterThan(-1);
      expect(startAt).toBeGreaterThan(repoAt);
      sh(here(lines.slice(repoAt, startAt).join("\n")), dir);
      expect(readFileSync(join(app, "service.yaml"), "utf8")).toStartWith("hostname: 127.0.0.1\n");
      const checked = await runCli(["check"], { cwd: app });
      expect(checked.stdout).toMatch(/^ {2}hostname\s+127\.0\.0\.1\s+\[file\]$/m);

      await using server = await startServer(app, { SERVICE_SKIP_HTTPS_PROMPT: "1" });
      const atPort = (text: string) => here(text).replaceAll("localhost:3141", `localhost:${server.port}`);
      const [generated, ...banner] = shownUnder(lines, startAt).map(atPort);
      expect(generated).toEndWith("…");
      expect(server.stdout.text).toStartWith(generated!.slice(0, -1).trimEnd());
      await waitFor(() => server.stdout.text.includes("Auth: required"), "the whole banner");
      const printed = server.stdout.text.split("\n");
      const from = printed.findIndex((line) => line.startsWith("listening on "));
      const to = printed.indexOf("Auth: required");
      expect(to).toBeGreaterThan(from);
      expect(printed.slice(from, to + 1)).toEqual(banner);

      const curlAt = lines.findIndex((line) => line.startsWith("curl "));
      const output = sh(atPort(lines[curlAt]!), app).trimEnd().split("\n");
      const commit = sh("git rev-parse --short HEAD", app).trim();
      expect(output).toContain(`deploying ${commit}`);
      expect(output.at(-1)).toBe(shownUnder(lines, curlAt).at(-1)!);
      expect(output.at(-1)).toBe("[done] ok=true exitCode=0");
    },
    30_000,
  );
});
