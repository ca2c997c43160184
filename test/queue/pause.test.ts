import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { consola } from "consola";
import { StreamReader, startGated } from "../_support/gate.ts";
import { adminUrl, startAdmin } from "../_support/admin-helpers.ts";
import { lastLine, logFiles, makeRepo, post, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";
import { startLibraryServer } from "../_support/library.ts";
import { readAudit } from "../../src/audit/read.ts";
import { auditDir } from "../../src/audit/trail.ts";

/** A logger that keeps the test output clean. */
function quiet() {
  return consola.create({ level: -999 }).withTag("service");
}

describe("service pause / resume", () => {
  test("while paused, a webhook POST starts nothing and answers 200 [skipped] paused: <reason>; resume lets deploys run again", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed" };
    await using server = await startServer(repo.clone, env);
    const paused = await runCli(["pause", "--reason", "db migration"], { cwd: repo.clone, env });
    expect(paused.code).toBe(0);
    const text = await post(server.url, { secret: SECRET });
    expect(text.status).toBe(200);
    expect(await text.text()).toBe("[skipped] paused: db migration\n");
    const json = await post(`${server.url}?format=json`, { secret: SECRET });
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ skipped: true, paused: true, reason: "db migration" });
    expect(logFiles(repo.clone)).toEqual([]);
    // A wrong secret is still refused: the pause says nothing to an unauthenticated client.
    expect((await post(server.url, { secret: "wrong-secret-0123456789" })).status).toBe(401);

    expect((await runCli(["resume"], { cwd: repo.clone, env })).code).toBe(0);
    const after = await post(server.url, { secret: SECRET });
    expect(lastLine(await after.text())).toBe("[done] ok=true exitCode=0");
  });

  test("the pause outlives a restart of the server", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed" };
    expect((await runCli(["pause", "--reason", "freeze"], { cwd: repo.clone, env })).code).toBe(0);
    await using server = await startServer(repo.clone, env);
    expect(await (await post(server.url, { secret: SECRET })).text()).toBe("[skipped] paused: freeze\n");
    await server.stop();
    await using again = await startServer(repo.clone, env);
    expect(again.stdout.text + again.stderr.text).toContain("deploys are paused: freeze");
    expect(await (await post(again.url, { secret: SECRET })).text()).toBe("[skipped] paused: freeze\n");
  });

  test("the admin listener's /metrics shows service_paused 1 while paused, 0 after resume", async () => {
    const repo = makeRepo();
    await using server = (await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "echo ok" })).server;
    const admin = adminUrl(server);
    const paused = async () =>
      /^service_paused\{app="default"\} (\d)$/m.exec(await (await fetch(`${admin}/metrics`)).text())?.[1];
    expect(await paused()).toBe("0");
    expect((await runCli(["pause"], { cwd: repo.clone })).code).toBe(0);
    expect(await paused()).toBe("1");
    expect((await runCli(["resume"], { cwd: repo.clone })).code).toBe(0);
    expect(await paused()).toBe("0");
  });

  test("service deploy refuses while paused, with the reason, unless --force", async () => {
    const repo = makeRepo();
    const env = { SERVICE_RUN_SCRIPT: "echo deployed" };
    expect((await runCli(["pause", "--reason", "release freeze"], { cwd: repo.clone, env })).code).toBe(0);
    const refused = await runCli(["deploy"], { cwd: repo.clone, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("deploys are paused: release freeze");
    expect(logFiles(repo.clone)).toEqual([]);
    const forced = await runCli(["deploy", "--force"], { cwd: repo.clone, env });
    expect(forced.code).toBe(0);
    expect(lastLine(forced.stdout)).toBe("[done] ok=true exitCode=0");
  });

  test("a running deploy finishes while paused; a waiting one keeps waiting until resume", async () => {
    await using gated = await startGated();
    const { repo, gate, env, server } = gated;
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    const second = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => second.text.includes("[queued]"), "the second deploy to queue");
    expect((await runCli(["pause"], { cwd: repo.clone, env })).code).toBe(0);
    gate.open();
    expect(lastLine(await first.done)).toBe("[done] ok=true exitCode=0");
    // The first deploy is over and the second is next, but paused: the queue looks again every 100 ms, and a
    // CLI run (a whole process start) takes longer than that.
    expect((await runCli(["logs"], { cwd: repo.clone, env })).code).toBe(0);
    expect(second.id()).toBeUndefined();
    expect(gate.lines().length).toBe(2);
    expect((await runCli(["resume"], { cwd: repo.clone, env })).code).toBe(0);
    expect(lastLine(await second.done)).toBe("[done] ok=true exitCode=0");
    expect(gate.lines().length).toBe(4);
  });

  test("bad input: a pause or resume of an unknown app, --app in single-app mode, a resume when nothing is paused", async () => {
    const repo = makeRepo();
    const other = makeRepo();
    const cwd = repo.dir;
    writeFileSync(
      join(cwd, "service.yaml"),
      `apps:\n  - name: web\n    host: localhost\n    path: /web\n    repoPath: ${repo.clone}\n    runScript: echo web\n  - name: api\n    host: localhost\n    path: /api\n    repoPath: ${other.clone}\n    runScript: echo api\n`,
    );
    const unknown = await runCli(["pause", "--app", "nope"], { cwd });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no app named "nope" (apps: web, api)');
    expect((await runCli(["resume", "--app", "nope"], { cwd })).code).toBe(1);
    const nothing = await runCli(["resume", "--app", "web"], { cwd });
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain('deploys of app "web" are not paused');
    const single = await runCli(["pause", "--app", "web"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: "echo" } });
    expect(single.code).toBe(1);
    expect(single.stderr).toContain("single-app mode");
    const long = await runCli(["pause", "--reason", "x".repeat(500)], {
      cwd: repo.clone,
      env: { SERVICE_RUN_SCRIPT: "echo" },
    });
    expect(long.code).toBe(1);
    expect(long.stderr).toContain("at most 200");
  });

  test("--app pauses one app: its webhooks are skipped, the other app's deploy", async () => {
    const repo = makeRepo();
    const other = makeRepo();
    const cwd = repo.dir;
    writeFileSync(
      join(cwd, "service.yaml"),
      `apps:\n  - name: web\n    host: localhost\n    path: /web\n    repoPath: ${repo.clone}\n    runScript: echo web\n    secret: ${SECRET}\n  - name: api\n    host: localhost\n    path: /api\n    repoPath: ${other.clone}\n    runScript: echo api\n    secret: ${SECRET}\n`,
    );
    await using server = await startServer(cwd);
    expect((await runCli(["pause", "--app", "web", "--reason", "web freeze"], { cwd })).code).toBe(0);
    expect(await (await post(`${server.url}/web`, { secret: SECRET })).text()).toBe(
      "[skipped] paused: web freeze (service resume --app web lifts it)\n",
    );
    expect(lastLine(await (await post(`${server.url}/api`, { secret: SECRET })).text())).toBe(
      "[done] ok=true exitCode=0",
    );
    expect((await runCli(["resume", "--app", "web"], { cwd })).code).toBe(0);
    expect(lastLine(await (await post(`${server.url}/web`, { secret: SECRET })).text())).toBe(
      "[done] ok=true exitCode=0",
    );
  });
});

describe("the library's controls", () => {
  test("server.pause, server.resume and server.cancel act like the commands, and refuse bad input", async () => {
    const repo = makeRepo();
    await using server = await startLibraryServer(
      { secret: SECRET, repoPath: repo.clone, runScript: "echo deployed", port: 0 },
      { cwd: repo.clone, logger: quiet() },
    );
    expect(server.pause({ reason: "library freeze" }).reason).toBe("library freeze");
    expect(await (await post(server.url!, { secret: SECRET })).text()).toBe("[skipped] paused: library freeze\n");
    expect(() => server.pause({ app: "nope" })).toThrow("single-app mode");
    expect(server.resume()?.reason).toBe("library freeze");
    expect(lastLine(await (await post(server.url!, { secret: SECRET })).text())).toBe("[done] ok=true exitCode=0");
    await expect(server.cancel("ffffffff")).rejects.toThrow('no deploy with id "ffffffff"');
    // Each is a line of the audit trail, as library:<user>, the refusals too.
    const lines = readAudit(auditDir(repo.clone)).filter((l) => l.actor.startsWith("library:"));
    expect(lines.map((l) => [l.action, l.outcome])).toEqual([
      ["pause", "ok"],
      ["pause", "refused"],
      ["resume", "ok"],
      ["cancel", "refused"],
    ]);
  });
});
