/**
 * An app's pause is lifted by `service resume --app <name>`: every hint about it says so.
 * `service resume` alone answers "not paused" for it.
 */
import { describe, expect, test } from "bun:test";
import { makeRepo, runCli, startServer, tempDir } from "../_support/helpers.ts";
import { postAs, writeServiceYaml } from "../_support/webhook-fixtures.ts";

const WEB_SECRET = "web-secret-0123456789";

function webApp() {
  const repo = makeRepo();
  const cwd = tempDir("service-apps-");
  writeServiceYaml(cwd, {
    apps: [
      {
        name: "web",
        host: "web.example.com",
        path: "/hook",
        repoPath: repo.clone,
        runScript: "echo hi",
        secret: WEB_SECRET,
      },
    ],
  });
  return { repo, cwd };
}

describe('the hint of an app-level pause names --app (docs/deploy-control.md "Pause and resume")', () => {
  test("service deploy's refusal, the webhook's skip answers and the start notice say service resume --app web", async () => {
    const { cwd } = webApp();
    expect((await runCli(["pause", "--app", "web", "--reason", "freeze"], { cwd })).code).toBe(0);

    const refused = await runCli(["deploy", "--app", "web"], { cwd });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("service resume --app web");

    await using server = await startServer(cwd);
    expect(server.stdout.text + server.stderr.text).toContain("service resume --app web lifts it");
    const text = await postAs(server.url, "web.example.com", "/hook", { secret: WEB_SECRET });
    expect(await text.text()).toBe("[skipped] paused: freeze (service resume --app web lifts it)\n");
    const json = await postAs(server.url, "web.example.com", "/hook?format=json", { secret: WEB_SECRET });
    expect(await json.json()).toEqual({
      skipped: true,
      paused: true,
      reason: "freeze",
      app: "web",
      resume: "service resume --app web",
    });
  });

  test("service resume without --app names the paused app and the command that lifts its pause", async () => {
    const { cwd } = webApp();
    expect((await runCli(["pause", "--app", "web"], { cwd })).code).toBe(0);
    const resumed = await runCli(["resume"], { cwd });
    expect(resumed.code).toBe(1);
    expect(resumed.stderr).toContain('app "web" is paused');
    expect(resumed.stderr).toContain("service resume --app web");
    expect((await runCli(["resume", "--app", "web"], { cwd })).code).toBe(0);
  });
});
