import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createServiceServer } from "../../src/index.ts";
import { makeGate } from "../_support/gate.ts";
import { baseEnv, CLI, makeRepo, runCli, tempDir, waitFor } from "../_support/helpers.ts";

async function status(cwd: string, args: string[] = [], env: Record<string, string> = {}) {
  const out = await runCli(["status", ...args], { cwd, env });
  return { ...out, json: args.includes("--json") && out.code === 0 ? JSON.parse(out.stdout) : undefined };
}

const children: Bun.Subprocess[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

describe("service status", () => {
  test("after deploys: the deployed commit, nothing running or waiting, the last deploy's outcome, id and age", async () => {
    const repo = makeRepo();
    const ok = await runCli(["deploy"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: "true" } });
    expect(ok.code).toBe(0);
    const failed = await runCli(["deploy"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: "false" } });
    const failedId = /^\[deploy\] ([0-9a-f-]{36})/m.exec(failed.stdout)![1]!;
    const { code, json } = await status(repo.clone, ["--json"]);
    expect(code).toBe(0);
    expect(json).toHaveLength(1);
    expect(json[0]).toMatchObject({
      app: null,
      repoPath: repo.clone,
      commit: repo.head(),
      paused: null,
      running: null,
      waiting: 0,
    });
    expect(json[0].last).toMatchObject({ id: failedId, outcome: "FAILED" });
    expect(json[0].last.ageMs).toBeGreaterThanOrEqual(0);
    expect(Number.isNaN(Date.parse(json[0].last.finishedAt))).toBe(false);

    const human = await status(repo.clone);
    expect(human.stdout).toContain(`repo ${repo.clone}`);
    expect(human.stdout).toContain(`live:    ${repo.head().slice(0, 12)} "initial" by Test`);
    expect(human.stdout).toContain("running: none");
    expect(human.stdout).toContain(`last:    FAILED ${failedId}`);
  });

  test("a running deploy (id, trigger, since) and the deploys waiting behind it, from another process", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const env = baseEnv({ SERVICE_RUN_SCRIPT: gate.script, ...gate.env });
    const spawn = () => {
      const child = Bun.spawn([...CLI, "deploy"], { cwd: repo.clone, env, stdout: "ignore", stderr: "ignore" });
      children.push(child);
      return child;
    };
    const first = spawn();
    const [runningId] = await waitFor(
      () => (gate.starts().length === 1 ? gate.starts() : undefined),
      "the first deploy to start",
    );
    const second = spawn();
    const json = await waitFor(async () => {
      const { json } = await status(repo.clone, ["--json"]);
      return json[0].waiting === 1 ? json : undefined;
    }, "the second deploy to wait");
    expect(json[0].running).toMatchObject({ id: runningId, trigger: "cli" });
    expect(Number.isNaN(Date.parse(json[0].running.since))).toBe(false);
    gate.open();
    expect([await first.exited, await second.exited]).toEqual([0, 0]);
    const after = await status(repo.clone, ["--json"]);
    expect(after.json[0]).toMatchObject({ running: null, waiting: 0, last: { outcome: "ok" } });
  });

  test("multi-app: every app, or the one --app names; an unknown app is one line and exit 1", async () => {
    const cwd = tempDir();
    const web = makeRepo();
    const api = makeRepo();
    const entry = (name: string, repoPath: string) =>
      `  - name: ${name}\n    host: ${name}.example\n    path: /\n    repoPath: ${repoPath}\n    runScript: "true"\n`;
    writeFileSync(join(cwd, "service.yaml"), `apps:\n${entry("web", web.clone)}${entry("api", api.clone)}`);
    expect((await runCli(["deploy", "--app", "web"], { cwd })).code).toBe(0);
    const all = await status(cwd, ["--json"]);
    expect(all.json.map((s: { app: string }) => s.app)).toEqual(["web", "api"]);
    expect(all.json[0].last.outcome).toBe("ok");
    expect(all.json[1].last).toBeNull();
    const one = await status(cwd, ["--app", "api", "--json"]);
    expect(one.json).toHaveLength(1);
    expect(one.json[0]).toMatchObject({ app: "api", commit: api.head() });
    const unknown = await status(cwd, ["--app", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split("\n")).toHaveLength(1);
    expect(unknown.stderr).toContain('no app named "nope"');
  });

  test("--cwd: from a shell elsewhere; no deploys yet: last is none", async () => {
    const repo = makeRepo();
    mkdirSync(join(repo.clone, ".service"), { recursive: true });
    const { code, stdout } = await status(tempDir(), ["--cwd", repo.clone]);
    expect(code).toBe(0);
    expect(stdout).toContain("last:    none");
  });

  test("library: server.status({app?}) gives the same plain objects", async () => {
    const repo = makeRepo();
    expect((await runCli(["deploy"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: "true" } })).code).toBe(0);
    const server = createServiceServer({ runScript: "true", secret: "library-secret-0123456789" }, { cwd: repo.clone });
    const [one] = await server.status();
    expect(one).toMatchObject({ app: null, commit: repo.head(), running: null, waiting: 0, last: { outcome: "ok" } });
    await expect(server.status({ app: "web" })).rejects.toThrow("single-app mode");
  });
});
