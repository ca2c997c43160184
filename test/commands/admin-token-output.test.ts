/**
 * A generated admin token is shown only on a terminal (docs/admin.md "Turning it on"): started under systemd or
 * into a pipe, the output lands in a journal or a file, so the banner says where the token is stored and how to
 * read it instead. The webhook secret keeps the spec's rule: printed on the first start.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, CLI, makeRepo, startServer, waitFor } from "../_support/helpers.ts";

const noPty = process.platform !== "linux" || Bun.which("script") === null;
const ptys = new Set<Bun.Subprocess>();
afterAll(() => {
  for (const proc of ptys) proc.kill("SIGKILL");
});

const tokenOf = (cwd: string) => readFileSync(join(cwd, ".service", "admin.token"), "utf8").trim();

describe('the generated admin token (docs/admin.md "Turning it on")', () => {
  test("off a terminal: not printed; the banner names the file and the command that reads it", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, { SERVICE_ADMIN_PORT: "0", SERVICE_RUN_SCRIPT: "echo hi" });
    const output = server.stdout.text + server.stderr.text;
    const token = tokenOf(repo.clone);
    expect(output).not.toContain(token);
    const file = join(repo.clone, ".service", "admin.token");
    expect(output).toContain(`Generated an admin token and saved it to ${file} (mode 0600)`);
    expect(output).toContain(`read it with: cat ${file}`);
    // The webhook secret is still shown on its first start.
    expect(output).toContain(readFileSync(join(repo.clone, ".service.secret"), "utf8").trim());
  });

  test.skipIf(noPty)("on a terminal: printed once", async () => {
    const repo = makeRepo();
    const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
    const proc = Bun.spawn(["script", "-qfec", `exec ${CLI.map(quote).join(" ")}`, "/dev/null"], {
      cwd: repo.clone,
      env: baseEnv({ SERVICE_PORT: "0", SERVICE_ADMIN_PORT: "0", SERVICE_RUN_SCRIPT: "echo hi" }),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    ptys.add(proc);
    let screen = "";
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of proc.stdout) screen += decoder.decode(chunk, { stream: true });
    })();
    try {
      await waitFor(() => /Auth: required/.test(screen), "the banner");
      expect(screen).toContain(tokenOf(repo.clone));
    } finally {
      proc.kill("SIGKILL");
      await proc.exited;
    }
  });
});
