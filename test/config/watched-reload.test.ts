/**
 * docs/configuration.md "Reload": refused requests are answered from the configuration as last seen, the files
 * watched; a request that may deploy looks at the files itself. A flood of wrong secrets costs no system call on
 * the config file, the working directory or the secret files while none of them changes.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastLine, makeRepo, post, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";
import { postAs, writeServiceYaml } from "../_support/webhook-fixtures.ts";

const hasStrace = Bun.spawnSync(["sh", "-c", "command -v strace"]).exitCode === 0;

/** The file-status calls (stat, statx, newfstatat…) process `pid` makes on paths under `dir` while `work` runs. */
async function statsUnder(pid: number, dir: string, work: () => Promise<void>): Promise<string[]> {
  const out = join(tempDir("service-strace-"), "trace");
  const strace = Bun.spawn(
    ["strace", "-f", "-e", "trace=stat,lstat,newfstatat,statx,fstatat64", "-o", out, "-p", String(pid)],
    { stdout: "ignore", stderr: "pipe" },
  );
  // strace says "Process <pid> attached" once it traces.
  const said = { text: "" };
  void (async () => {
    for await (const chunk of strace.stderr) said.text += new TextDecoder().decode(chunk);
  })();
  await waitFor(() => said.text.includes("attached"), "strace to attach");
  try {
    await work();
  } finally {
    strace.kill("SIGINT");
    await strace.exited;
  }
  const text = await Bun.file(out).text();
  return text.split("\n").filter((line) => line.includes(dir));
}

describe('config reload, watched (docs/configuration.md "Reload")', () => {
  test.skipIf(!hasStrace)(
    "40 wrong secrets to two apps whose secrets are generated files: far fewer file-status calls than requests",
    async () => {
      const [web, api] = [makeRepo(), makeRepo()];
      const cwd = tempDir("service-apps-");
      writeServiceYaml(cwd, {
        apps: [
          { name: "web", host: "web.example.com", path: "/hook", repoPath: web.clone, runScript: "true" },
          { name: "api", host: "api.example.com", path: "/hook", repoPath: api.clone, runScript: "true" },
        ],
      });
      await using server = await startServer(cwd);
      const calls = await statsUnder(server.proc.pid, cwd, async () => {
        for (let i = 0; i < 20; i++)
          for (const host of ["web.example.com", "api.example.com"]) {
            const refused = await postAs(server.url, host, "/hook", { secret: "wrong-secret-0123456789" });
            expect([401, 429]).toContain(refused.status);
          }
      });
      // Before: at least one stat of the working directory and one of the app's secret file per request (80).
      expect(calls.length).toBeLessThan(20);
    },
    60_000,
  );

  test("an edit is in force for refusals too, without a deploy: an unauthorized POST to the new path gets 401, to the old one 404", async () => {
    const cwd = tempDir();
    const repo = makeRepo();
    writeFileSync(join(cwd, "service.yaml"), `repoPath: ${repo.clone}\nrunScript: "true"\n`);
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET });
    expect((await post(`${server.url}/moved`, { secret: "wrong" })).status).toBe(404);
    writeFileSync(join(cwd, "service.yaml"), `repoPath: ${repo.clone}\nrunScript: "true"\npath: /moved\n`);
    await waitFor(async () => (await post(`${server.url}/moved`, { secret: "wrong" })).status === 401, "the edit");
    expect((await post(server.url, { secret: "wrong" })).status).toBe(404);
    // And a deploy right after an edit sees it, whatever the watch said by then.
    writeFileSync(join(cwd, "service.yaml"), `repoPath: ${repo.clone}\nrunScript: echo edited\npath: /moved\n`);
    const text = await (await post(`${server.url}/moved`, { secret: SECRET })).text();
    expect(text).toContain("edited");
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
  });
});
