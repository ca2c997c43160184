/**
 * Pause means pause for every trigger (docs/deploy-control.md "Pause and resume"), and the admin API says who acted
 * (docs/admin.md "Endpoints"): while paused, the API's deploy and rollback answer 409 with the pause's reason and
 * who set it, unless `force: true`, and the record of a forced deploy says `forced: true`; `service rollback`
 * refuses too, unless `--force`. Actions through the API are recorded as `admin@<address>`, with the label a
 * dashboard login gave (`admin:alice@…`).
 */
import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServiceServer } from "../../src/index.ts";
import { makeGate } from "../_support/gate.ts";
import { hasEnded, makeRepo, runCli, waitFor } from "../_support/helpers.ts";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { deployIdOf } from "../_support/ops-helpers.ts";

const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };

function client(admin: string, headers: Record<string, string> = bearer) {
  const call = async (path: string, body?: unknown) => {
    const res = await fetch(`${admin}/api/${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body ?? {}),
    });
    return { status: res.status, body: await res.json() };
  };
  const ended = (id: string) =>
    waitFor(async () => {
      const res = await fetch(`${admin}/api/deploys/${id}`, { headers: bearer });
      const record = res.ok ? await res.json() : undefined;
      return record && hasEnded(record.status) ? record : undefined;
    }, `deploy ${id} to end`);
  return { call, ended };
}

/** A dashboard session whose login gave the name `label`: its cookie. */
async function loginAs(admin: string, label: string): Promise<string> {
  const res = await fetch(`${admin}/login`, {
    method: "POST",
    body: new URLSearchParams({ token: ADMIN_TOKEN, label }),
    redirect: "manual",
  });
  await res.text();
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

describe('pause means pause for every trigger (docs/deploy-control.md "Pause and resume")', () => {
  test("paused: the API's deploy and rollback answer 409 with the reason and who paused; with force: true they run and the record says forced; service rollback refuses without --force", async () => {
    const repo = makeRepo();
    const { server, admin } = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "true" });
    await using _server = server;
    const { call, ended } = client(admin);
    const first = await call("apps/default/deploy");
    expect((await ended(first.body.id)).result.ok).toBe(true);

    const paused = await call("apps/default/pause", { reason: "release freeze" });
    expect(paused.body).toMatchObject({ paused: true, by: "admin@127.0.0.1" });
    for (const [action, body] of [
      ["deploy", {}],
      ["rollback", { to: first.body.id }],
    ] as const) {
      const refused = await call(`apps/default/${action}`, body);
      expect({ action, status: refused.status, error: refused.body.error }).toEqual({
        action,
        status: 409,
        error: "paused",
      });
      expect(refused.body.message).toBe(
        `deploys are paused: release freeze (since ${paused.body.since}, by admin@127.0.0.1); send {"force": true} to deploy anyway`,
      );
      expect(refused.body.paused).toMatchObject({ reason: "release freeze", by: "admin@127.0.0.1" });
    }
    expect((await call("apps/default/deploy", { force: "yes" })).status).toBe(400);

    const forced = await call("apps/default/deploy", { force: true });
    expect(forced.status).toBe(200);
    const record = await ended(forced.body.id);
    expect(record).toMatchObject({ forced: true, trigger: "api", result: { ok: true } });
    const log = readFileSync(record.result.log.log, "utf8");
    expect(log).toContain(
      `[deploy] forced: deploys are paused: release freeze (since ${paused.body.since}, by admin@127.0.0.1)`,
    );
    const rolled = await call("apps/default/rollback", { to: first.body.id, force: true });
    expect((await ended(rolled.body.id)).forced).toBe(true);

    const cli = await runCli(["rollback", first.body.id], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: "true" } });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain("deploys are paused: release freeze");
    expect(cli.stderr).toContain("--force deploys anyway");
    const forcedCli = await runCli(["rollback", first.body.id, "--force"], {
      cwd: repo.clone,
      env: { SERVICE_RUN_SCRIPT: "true" },
    });
    expect(forcedCli.code).toBe(0);
    expect(forcedCli.stdout).toContain("[deploy] forced: deploys are paused: release freeze");
    // Not paused any more: a --force changes nothing, and the record does not say forced.
    await call("apps/default/resume");
    const plain = await runCli(["deploy", "--force"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: "true" } });
    expect(plain.code).toBe(0);
    const last = await (await fetch(`${admin}/api/deploys/${deployIdOf(plain.stdout)}`, { headers: bearer })).json();
    expect(last.forced).toBeUndefined();
  });
});

describe("who acted through the admin API", () => {
  test("a session that logged in as alice deploys as admin:alice@<address>; a Bearer token pauses, resumes and cancels as admin@<address>; the cancelled record says so", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const { server, admin } = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: gate.script, ...gate.env });
    await using _server = server;
    const cookie = await loginAs(admin, "alice\u0007 @ ops");
    const { call: asAlice, ended } = client(admin, { cookie });
    const { call } = client(admin);

    const started = await asAlice("apps/default/deploy");
    expect(started.status).toBe(200);
    await waitFor(() => gate.starts().length === 1, "the deploy to start");
    const apps = await (await fetch(`${admin}/api/apps`, { headers: bearer })).json();
    expect(apps.apps[0].running).toMatchObject({ id: started.body.id, actor: "admin:alice - ops@127.0.0.1" });
    const cancelled = await call(`deploys/${started.body.id}/cancel`);
    expect(cancelled.body).toMatchObject({ state: "cancelled" });
    const record = await ended(started.body.id);
    expect(record).toMatchObject({
      actor: "admin:alice - ops@127.0.0.1",
      status: "cancelled",
      cancel: { by: "admin@127.0.0.1" },
      result: { error: "cancelled by admin@127.0.0.1" },
    });
    const listed = await (await fetch(`${admin}/api/deploys`, { headers: bearer })).json();
    expect(listed[0]).toMatchObject({ actor: "admin:alice - ops@127.0.0.1", cancelledBy: "admin@127.0.0.1" });

    await asAlice("apps/default/pause", { reason: "looking into it" });
    await asAlice("apps/default/resume");
    const status = JSON.parse((await runCli(["status", "--json"], { cwd: repo.clone })).stdout)[0];
    expect(status.resumed).toMatchObject({
      by: "admin:alice - ops@127.0.0.1",
      pause: { by: "admin:alice - ops@127.0.0.1", reason: "looking into it" },
    });
    gate.open();
  });
});

describe("the library's actions", () => {
  test("server.pause() records library:<user>; server.rollback() refuses while paused, and with force: true rolls back, recorded as forced by library:<user>", async () => {
    const repo = makeRepo();
    const user = `library:${execFileSync("id", ["-un"], { encoding: "utf8" }).trim()}`;
    const env = { SERVICE_RUN_SCRIPT: "true" };
    const first = repo.head();
    expect((await runCli(["deploy"], { cwd: repo.clone, env })).code).toBe(0);
    repo.push({ "b.txt": "b\n" }, "second");
    expect((await runCli(["deploy"], { cwd: repo.clone, env })).code).toBe(0);
    const server = createServiceServer({ runScript: "true", secret: "library-secret-0123456789" }, { cwd: repo.clone });
    expect(server.pause({ reason: "hands off" }).by).toBe(user);
    await expect(server.rollback()).rejects.toThrow("deploys are paused: hands off");
    const result = await server.rollback(undefined, { force: true });
    expect([result.ok, result.actor, repo.head()]).toEqual([true, user, first]);
    expect(JSON.parse(readFileSync(result.log.json, "utf8")).forced).toBe(true);
    expect(server.resume()?.reason).toBe("hands off");
  });
});
