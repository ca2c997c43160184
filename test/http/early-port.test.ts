/**
 * The webhook port opens as soon as the configuration is read, before the rest of the server has loaded: a delivery
 * that comes while the server starts waits for it and is answered as the spec says, and a start that fails after
 * the port opened closes it again (one line, exit 1, nothing left listening).
 */
import { describe, expect, test } from "bun:test";
import { makeRepo, post, runCli, SECRET, waitFor } from "../_support/helpers.ts";
import { freePort } from "../_support/proxies.ts";
import { HTTPS_QUESTION_LINE, noPty, startInPty } from "../_support/pty.ts";

describe("the webhook port while the server starts", () => {
  test.skipIf(noPty)(
    "a delivery sent while the start waits for the HTTPS question is answered once the server is up",
    async () => {
      const repo = makeRepo();
      const port = await freePort();
      await using pty = startInPty(repo.clone, { SERVICE_PORT: String(port), SERVICE_RUN_SCRIPT: "echo deployed" });
      await waitFor(() => HTTPS_QUESTION_LINE.test(pty.screen()), "the HTTPS question");
      // The port is open already: the connection is taken, and the delivery waits for the server behind it.
      const answer = post(`http://127.0.0.1:${port}/`, { secret: SECRET });
      pty.type("n");
      expect(await pty.banner()).toBe(port);
      const response = await answer;
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).toContain("deployed");
      expect(text).toMatch(/\[done\] ok=true/);
    },
    30_000,
  );

  test("a start that fails after the port opened closes it: one line, exit 1, the port free again", async () => {
    const repo = makeRepo();
    const port = await freePort();
    // A configured secret under 4 characters is refused once the port is open (the secrets come after it).
    const started = await runCli([], { cwd: repo.clone, env: { SERVICE_PORT: String(port), SERVICE_SECRET: "abc" } });
    expect(started.code).toBe(1);
    expect(started.stderr).toContain("SERVICE_SECRET");
    expect(started.stderr).not.toContain("    at ");
    expect(started.stdout).not.toContain("listening on");
    // Nothing listens there now.
    const refused = await fetch(`http://127.0.0.1:${port}/`, { method: "POST" }).then(
      () => "answered",
      () => "refused",
    );
    expect(refused).toBe("refused");
  });
});
