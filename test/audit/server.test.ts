/**
 * docs/audit.md: the server writes the trail: started and stopped (a crash leaves `started` alone), logins and
 * logouts, every action of the admin API (refusals included, with force and skipGate), a reload's changed keys, a
 * token's file changed; `GET /api/audit` answers the admin role over every app only.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startAdmin } from "../_support/admin-helpers.ts";
import { runCli, waitFor } from "../_support/helpers.ts";
import { TOKEN_VALUES, tokenSetup, writeToken } from "../_support/token-fixtures.ts";
import { readAudit } from "../../src/audit/read.ts";
import { auditDir } from "../../src/audit/trail.ts";

const as = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

describe("the server's audit lines", () => {
  test("logins, API actions allowed and refused, a reload, a rotated token, the stop; GET /api/audit for admins only", async () => {
    const setup = tokenSetup();
    const { cwd } = setup;
    const server = await startAdmin(cwd, { SERVICE_SECRET: undefined });
    const { admin } = server;
    const lines = () => readAudit(auditDir(cwd));
    const last = () => lines().at(-1)!;
    expect(lines().map((l) => l.action)).toEqual(["started"]);

    const login = (token: string, label = "") =>
      fetch(`${admin}/login`, { method: "POST", body: new URLSearchParams({ token, label }), redirect: "manual" });
    expect((await login("wrong-token-0123456789")).status).toBe(401);
    expect(last()).toMatchObject({ action: "login refused", actor: "unknown", method: "token", outcome: "refused" });
    const ok = await login(TOKEN_VALUES.ops, "alice");
    expect(ok.status).toBe(303);
    expect(last()).toMatchObject({ action: "login ok", actor: "token:ops:alice", address: "127.0.0.1", outcome: "ok" });
    const session = ok.headers.get("set-cookie")!.split(";")[0]!;
    await fetch(`${admin}/logout`, { method: "POST", headers: { cookie: session }, redirect: "manual" });
    expect(last()).toMatchObject({ action: "logout", actor: "token:ops:alice", outcome: "ok" });

    const act = (token: string, path: string, body: unknown = {}) =>
      fetch(`${admin}/api/${path}`, { method: "POST", headers: as(token), body: JSON.stringify(body) });
    const deployed = await act(TOKEN_VALUES["ci-web"], "apps/web/deploy");
    expect(deployed.status).toBe(200);
    const { id } = (await deployed.json()) as { id: string };
    expect(last()).toMatchObject({
      action: "deploy asked",
      actor: "token:ci-web",
      app: "web",
      deploy: id,
      outcome: "ok",
    });
    expect((await act(TOKEN_VALUES["ci-web"], "apps/api/deploy")).status).toBe(403);
    expect(last()).toMatchObject({ action: "deploy asked", app: "api", outcome: "refused", reason: "forbidden" });
    expect((await act(TOKEN_VALUES["ci-web"], "apps/web/deploy", { force: true, ref: "main" })).status).toBe(403);
    expect(last()).toMatchObject({
      action: "deploy asked",
      app: "web",
      target: "main",
      force: true,
      outcome: "refused",
    });
    expect((await act(TOKEN_VALUES.ops, "apps/web/pause", { reason: "db migration" })).status).toBe(200);
    expect(last()).toMatchObject({ action: "pause", actor: "token:ops", app: "web", outcome: "ok" });
    expect((await act(TOKEN_VALUES.ops, "apps/web/deploy", { skipGate: true })).status).toBe(409);
    expect(last()).toMatchObject({ action: "deploy asked", skipGate: true, outcome: "refused", reason: "paused" });
    expect((await act(TOKEN_VALUES.ops, "apps/web/resume")).status).toBe(200);
    expect((await act(TOKEN_VALUES.ops, "deploys/00000000/cancel")).status).toBe(404);
    expect(last()).toMatchObject({ action: "cancel", deploy: "00000000", outcome: "refused", reason: "not found" });

    const audit = (token: string) => fetch(`${admin}/api/audit?since=1h&limit=3`, { headers: as(token) });
    expect((await audit(TOKEN_VALUES.grafana)).status).toBe(403);
    expect((await audit(TOKEN_VALUES["ci-web"])).status).toBe(403);
    const answer = await audit(TOKEN_VALUES.ops);
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { action: string }[]).map((l) => l.action)).toEqual(
      lines()
        .slice(-3)
        .map((l) => l.action),
    );
    expect((await fetch(`${admin}/api/audit?limit=0`, { headers: as(TOKEN_VALUES.ops) })).status).toBe(400);

    // A reload: the names of the keys that changed, never their values.
    const yaml = join(cwd, "service.yaml");
    writeFileSync(yaml, readFileSync(yaml, "utf8").replace('runScript: "true"', "runScript: 'echo secret-value'"));
    await waitFor(async () => {
      await fetch(`${admin}/api/apps`, { headers: as(TOKEN_VALUES.ops) });
      return lines().some((l) => l.action === "config reloaded");
    }, "the reload's line");
    const reloaded = lines().find((l) => l.action === "config reloaded")!;
    expect(reloaded.keys).toEqual(["apps.web.runScript"]);
    expect(JSON.stringify(lines())).not.toContain("secret-value");

    // A token's file rewritten: rotated, named, its value nowhere.
    writeToken(setup.file("ci-web"), "ci-web-rotated-0123456789abcdef");
    await waitFor(async () => {
      await fetch(`${admin}/api/apps`, { headers: as(TOKEN_VALUES.ops) });
      return lines().some((l) => l.action === "token rotated");
    }, "the rotation's line");
    expect(lines().find((l) => l.action === "token rotated")).toMatchObject({ target: "ci-web", actor: "service" });
    const text = readFileSync(join(auditDir(cwd), `audit-${new Date().toISOString().slice(0, 7)}.jsonl`), "utf8");
    for (const value of [...Object.values(TOKEN_VALUES), "ci-web-rotated-0123456789abcdef"])
      expect(text).not.toContain(value);

    expect(await server.stop()).toBe(0);
    expect(last()).toMatchObject({ action: "stopped", actor: "service" });
    const verified = await runCli(["audit", "--verify"], { cwd });
    expect(verified.stdout).toContain("the audit trail is whole");
  }, 60_000);

  test("a crash leaves `started` without `stopped`", async () => {
    const setup = tokenSetup();
    const server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    const again = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    await again.stop();
    expect(readAudit(auditDir(setup.cwd)).map((l) => l.action)).toEqual(["started", "started", "stopped"]);
  }, 60_000);
});
