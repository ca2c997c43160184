import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeGate } from "../_support/gate.ts";
import { defer, makeRepo, runCli, SECRET, waitFor } from "../_support/helpers.ts";
import { adminSession, bearer, crossSiteHeaders, startAdmin } from "../_support/admin-helpers.ts";

const auth = bearer();

async function call(
  url: string,
  body?: unknown,
  headers: Record<string, string> = auth,
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function record(admin: string, id: string): Promise<any> {
  return (await fetch(`${admin}/api/deploys/${id}`, { headers: auth })).json();
}

const ended = (admin: string, id: string) =>
  waitFor(async () => {
    const body = await record(admin, id);
    return body.status === "done" ? body : undefined;
  }, `deploy ${id} to end`);

describe("admin API actions", () => {
  test("POST /api/apps/<app>/rollback {to} deploys the commit an earlier deploy left, with trigger rollback; no body takes the last ok one before HEAD", async () => {
    const repo = makeRepo();
    const first = repo.head();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "echo ran" });
    const { admin } = server;
    const one = await call(`${admin}/api/apps/default/deploy`);
    await ended(admin, one.body.id);
    const second = repo.push({ "b.txt": "b\n" }, "second");
    const two = await call(`${admin}/api/apps/default/deploy`);
    expect((await ended(admin, two.body.id)).result.ok).toBe(true);
    expect(repo.head()).toBe(second);

    const back = await call(`${admin}/api/apps/default/rollback`, { to: one.body.id.slice(0, 8) });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ accepted: true });
    const done = await ended(admin, back.body.id);
    expect(done.trigger).toBe("rollback");
    expect(done.result.ok).toBe(true);
    expect(repo.head()).toBe(first);

    // No target: the newest ok deploy whose commit differs from HEAD (the second one's).
    const forth = await call(`${admin}/api/apps/default/rollback`);
    expect(forth.status).toBe(200);
    await ended(admin, forth.body.id);
    expect(repo.head()).toBe(second);
  });

  test("rollback errors: a target that names nothing → 409, a body that is no JSON object or a non-string `to` → 400, an unknown app → 404; nothing is queued", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "echo ran" });
    const { admin } = server;
    const none = await call(`${admin}/api/apps/default/rollback`, { to: "no-such-ref" });
    expect(none.status).toBe(409);
    expect(none.body).toMatchObject({ error: "no rollback target" });
    expect(none.body.message).toContain("no-such-ref");
    expect((await call(`${admin}/api/apps/default/rollback`, "[1,2]")).status).toBe(400);
    expect((await call(`${admin}/api/apps/default/rollback`, "{not json")).status).toBe(400);
    const wrongType = await call(`${admin}/api/apps/default/rollback`, { to: 42 });
    expect(wrongType).toMatchObject({ status: 400, body: { error: "bad request" } });
    expect((await call(`${admin}/api/apps/nope/rollback`, {})).status).toBe(404);
    const big = await call(`${admin}/api/apps/default/rollback`, { to: "x".repeat(10_000) });
    expect(big.status).toBe(413);
    expect(
      existsSync(join(repo.clone, ".service", "logs")) ? readdirSync(join(repo.clone, ".service", "logs")) : [],
    ).toEqual([]);
  });

  test("POST /api/deploys/<id>/cancel cancels a running deploy; a finished one → 409, an unknown id → 404, no id → 400", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: gate.script, ...gate.env });
    const { admin } = server;
    await using _cleanup = defer(() => gate.open());
    const { body: ack } = await call(`${admin}/api/apps/default/deploy`);
    await waitFor(() => gate.starts().length === 1, "the deploy to start");
    const cancel = await call(`${admin}/api/deploys/${ack.id.slice(0, 8)}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ id: ack.id });
    const done = await waitFor(async () => {
      const body = await record(admin, ack.id);
      return body.status === "cancelled" ? body : undefined;
    }, "the deploy to end cancelled");
    expect(done.result.ok).toBe(false);
    expect(done.result.error).toBe("cancelled by admin@127.0.0.1");

    const again = await call(`${admin}/api/deploys/${ack.id}/cancel`);
    expect(again).toMatchObject({ status: 409, body: { error: "cannot cancel" } });
    expect((await call(`${admin}/api/deploys/00000000/cancel`)).status).toBe(404);
    expect((await call(`${admin}/api/deploys/not%20an%20id/cancel`)).status).toBe(400);
  });

  test("POST /api/apps/<app>/pause {reason} pauses (the API and webhooks see it), /resume lifts it; a too long reason → 400", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "echo ran" });
    const { admin } = server;
    const paused = await call(`${admin}/api/apps/default/pause`, { reason: "release freeze" });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, reason: "release freeze" });
    const apps = await (await fetch(`${admin}/api/apps`, { headers: auth })).json();
    expect(apps.apps[0].paused).toMatchObject({ reason: "release freeze" });
    expect((await call(`${admin}/api/apps/default/pause`, { reason: "r".repeat(500) })).status).toBe(400);

    const resumed = await call(`${admin}/api/apps/default/resume`);
    expect(resumed).toMatchObject({ status: 200, body: { resumed: true, was: { reason: "release freeze" } } });
    expect((await (await fetch(`${admin}/api/apps`, { headers: auth })).json()).apps[0].paused).toBe(false);
    expect((await call(`${admin}/api/apps/default/resume`)).body).toEqual({ resumed: false });
  });

  test("multi-app: pause and resume one app; while every app is paused, resuming one app answers 409 saying how to lift it", async () => {
    const web = makeRepo();
    const api = makeRepo();
    const cwd = web.dir;
    writeFileSync(
      join(cwd, "service.yaml"),
      `apps:\n  - name: web\n    host: localhost\n    path: /web\n    repoPath: ${web.clone}\n    runScript: echo web\n    secret: ${SECRET}\n  - name: api\n    host: localhost\n    path: /api\n    repoPath: ${api.clone}\n    runScript: echo api\n    secret: ${SECRET}\n`,
    );
    await using server = await startAdmin(cwd);
    const { admin } = server;
    expect((await call(`${admin}/api/apps/web/pause`, { reason: "web freeze" })).body).toMatchObject({
      paused: true,
      app: "web",
      reason: "web freeze",
    });
    const apps = (await (await fetch(`${admin}/api/apps`, { headers: auth })).json()).apps;
    expect(apps.map((a: any) => [a.name, a.paused === false ? false : a.paused.reason])).toEqual([
      ["web", "web freeze"],
      ["api", false],
    ]);
    expect((await call(`${admin}/api/apps/web/resume`)).body).toMatchObject({ resumed: true });

    expect((await runCli(["pause", "--reason", "all frozen"], { cwd })).code).toBe(0);
    const still = await call(`${admin}/api/apps/api/resume`);
    expect(still).toMatchObject({ status: 409, body: { error: "still paused" } });
    expect(still.body.message).toContain("all frozen");
    expect(still.body.message).toContain("service resume");
  });

  test("every action needs the token (401) and is refused cross-site with the session cookie (403)", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "echo ran" });
    const { admin } = server;
    const [form] = crossSiteHeaders(await adminSession(admin));
    const actions = ["apps/default/rollback", "apps/default/pause", "apps/default/resume", "deploys/00000000/cancel"];
    for (const action of actions) {
      expect((await call(`${admin}/api/${action}`, {}, {})).status).toBe(401);
      const res = await fetch(`${admin}/api/${action}`, { method: "POST", headers: form, body: "reason=x" });
      expect(res.status).toBe(403);
      expect((await res.json()).error).toBe("cross-site request");
    }
    expect(existsSync(join(repo.clone, ".service", "paused"))).toBe(false);
  });
});
