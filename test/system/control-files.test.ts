/**
 * Files under `.service/` (and the queue's tickets) are read by the server on every request and by every
 * command: one that is not a regular file (a FIFO has no writer to wait for, a device no end) is refused at
 * once, never waited on.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { git, lastLine, makeRepo, post, runCli, SECRET } from "../_support/helpers.ts";

const GHOST = "0f0f0f0f-0000-4000-8000-000000000000";

function mkfifo(file: string): void {
  mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
  const made = Bun.spawnSync(["mkfifo", file]);
  if (made.exitCode !== 0) throw new Error(`mkfifo ${file}: ${made.stderr.toString()}`);
}

/** A request that must be answered: it fails the test (instead of hanging it) after 15 s. */
const within = (url: string, init: RequestInit = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });

describe('control files that are not regular files are refused, never waited on (docs/reliability.md "Faults and what the service does")', () => {
  test("FIFOs at the pause, cancel, queued, poll state, record, log and ticket files: the webhook, /healthz, the API and the commands still answer", async () => {
    const repo = makeRepo();
    const { server, admin } = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "echo ran" });
    await using _server = server;
    const service = join(repo.clone, ".service");
    for (const file of [
      join(service, "paused", "service.json"),
      join(service, "cancel", `${GHOST}.json`),
      join(service, "queued", `${GHOST}.json`),
      join(service, "poll", "default.json"),
      join(service, "logs", `2020-01-01_00-00-00Z_${GHOST}.json`),
      join(service, "logs", `2020-01-01_00-00-00Z_${GHOST}.log`),
      join(git(repo.clone, "rev-parse", "--absolute-git-dir"), "service-deploy-queue", "seat-999999-1-0"),
    ])
      mkfifo(file);

    const deploy = await within(server.url, { method: "POST", headers: { "x-service-secret": SECRET } });
    expect(lastLine(await deploy.text())).toBe("[done] ok=true exitCode=0");
    const health = await within(`${admin}/healthz`);
    expect(health.status).toBe(200);
    await health.text();
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    for (const path of ["/api/apps", "/api/deploys", `/api/deploys/${GHOST}`, `/api/deploys/${GHOST}/log`]) {
      const res = await within(`${admin}${path}`, { headers: auth });
      expect([path, res.status < 500]).toEqual([path, true]);
      await res.text();
    }
    const cancel = await within(`${admin}/api/deploys/${GHOST}/cancel`, { method: "POST", headers: auth });
    expect(cancel.status).toBeLessThan(500);
    await cancel.text();

    for (const args of [["status"], ["logs"], ["logs", GHOST], ["logs", "--json"]]) {
      const run = await runCli(args, { cwd: repo.clone, timeoutMs: 15_000 });
      expect([args, run.code === 0 || run.code === 1]).toEqual([args, true]);
      expect(run.stderr).not.toContain("    at ");
    }
    const logs = await runCli(["logs", GHOST], { cwd: repo.clone, timeoutMs: 15_000 });
    expect(logs.stdout + logs.stderr).toContain("not a regular file");
    // The server still serves afterwards.
    const again = await post(server.url, { secret: SECRET });
    expect(lastLine(await again.text())).toBe("[done] ok=true exitCode=0");
  });

  test("a FIFO at .service/admin.token or .service.secret stops the start with one line, never a hang", async () => {
    for (const [file, env] of [
      [".service/admin.token", { SERVICE_SECRET: SECRET, SERVICE_ADMIN_PORT: "0" }],
      [".service.secret", {}],
    ] as const) {
      const repo = makeRepo();
      mkfifo(join(repo.clone, file));
      const run = await runCli([], { cwd: repo.clone, env: { SERVICE_PORT: "0", ...env }, timeoutMs: 15_000 });
      expect([file, run.code]).toEqual([file, 1]);
      expect(run.stdout + run.stderr).toContain("not a regular file");
    }
  });
});
