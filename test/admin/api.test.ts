import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeGate } from "../_support/gate.ts";
import { baseEnv, CLI, defer, lastLine, makeRepo, post, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import { ADMIN_TOKEN, bearer, startAdmin } from "../_support/admin-helpers.ts";
import { runningRecordAlone } from "../_support/ops-helpers.ts";

const auth = bearer();

async function getJson(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers: auth });
  return { status: res.status, body: await res.json() };
}

describe("admin listener: /healthz", () => {
  test("GET /healthz answers 200 ok without auth while serving, 503 while shutting down", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: gate.script, ...gate.env });
    const { admin } = server;
    await using _cleanup = defer(() => gate.open());
    const ok = await fetch(`${admin}/healthz`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("ok\n");
    const deploy = await post(`${server.url}/?ack=1`, { secret: SECRET });
    expect(deploy.status).toBe(200);
    await deploy.text();
    await waitFor(() => gate.starts().length === 1, "the deploy to start");
    server.proc.kill("SIGTERM");
    await waitFor(
      async () =>
        (await fetch(`${admin}/healthz`).then(async (r) => {
          await r.text();
          return r.status;
        })) === 503,
      "healthz to say 503",
    );
    gate.open();
    expect(await server.proc.exited).toBe(0);
  });
});

describe("admin listener: JSON API", () => {
  test("POST /api/apps/<app>/deploy starts a deploy (trigger api) answered like an acknowledged webhook; the deploy shows in /api/deploys, /api/deploys/<id> and its log", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "echo deployed-through-the-api" });
    const { admin } = server;
    const res = await fetch(`${admin}/api/apps/default/deploy`, { method: "POST", headers: auth });
    expect(res.status).toBe(200);
    const ack = await res.json();
    expect(ack).toMatchObject({ accepted: true, position: 0 });
    expect(ack.id).toMatch(/^[0-9a-f-]{36}$/);
    const id: string = ack.id;
    const record = await waitFor(async () => {
      const { body } = await getJson(`${admin}/api/deploys/${id}`);
      return body.status === "done" ? body : undefined;
    }, "the deploy to end");
    expect(record.trigger).toBe("api");
    expect(record.result.ok).toBe(true);

    const list = await getJson(`${admin}/api/deploys?limit=5`);
    expect(list.status).toBe(200);
    expect(list.body[0]).toMatchObject({ id, trigger: "api", status: "done", ok: true });
    const log = await fetch(`${admin}/api/deploys/${id.slice(0, 8)}/log`, { headers: auth });
    const text = await log.text();
    expect(text).toContain("deployed-through-the-api");
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");

    const apps = await getJson(`${admin}/api/apps`);
    expect(apps.body.apps).toHaveLength(1);
    expect(apps.body.apps[0]).toMatchObject({
      name: "default",
      repoPath: repo.clone,
      commit: repo.head(),
      running: null,
      waiting: 0,
      paused: false,
    });
    expect(apps.body.apps[0].last).toMatchObject({ id, outcome: "ok" });
  });

  test("GET /api/apps shows the running deploy and how many wait; /api/deploys filters failed ones", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: gate.script, ...gate.env });
    const { admin } = server;
    await using _cleanup = defer(() => gate.open());
    const first = await (await fetch(`${admin}/api/apps/default/deploy`, { method: "POST", headers: auth })).json();
    await waitFor(() => gate.starts().length === 1, "the first deploy to start");
    const second = await (await fetch(`${admin}/api/apps/default/deploy`, { method: "POST", headers: auth })).json();
    expect(second.position).toBe(1);
    const { body } = await getJson(`${admin}/api/apps`);
    expect(body.apps[0].running).toMatchObject({ id: first.id, trigger: "api" });
    expect(body.apps[0].waiting).toBe(1);
    gate.open();
    await waitFor(
      async () => (await getJson(`${admin}/api/deploys`)).body.filter((d: any) => d.status === "done").length === 2,
      "both deploys to end",
    );
    expect((await getJson(`${admin}/api/deploys?failed=1`)).body).toEqual([]);
  });

  test("GET /api/deploys/<id>/log?follow=1 sends the text so far, then live until the deploy ends", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: gate.script, ...gate.env });
    const { admin } = server;
    await using _cleanup = defer(() => gate.open());
    const { id } = await (await fetch(`${admin}/api/apps/default/deploy`, { method: "POST", headers: auth })).json();
    await waitFor(() => gate.starts().length === 1, "the deploy to start");
    const res = await fetch(`${admin}/api/deploys/${id}/log?follow=1`, { headers: auth });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain(`[deploy] ${id} started`);
    gate.open();
    let text = first;
    for (let i = 0; i < 1000; i++) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
  });

  test("follow streams are bounded per client: past the limit 429", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: gate.script, ...gate.env });
    const { admin } = server;
    const open: ReadableStreamDefaultReader<Uint8Array>[] = [];
    await using _cleanup = defer(async () => {
      gate.open();
      for (const reader of open) await reader.cancel().catch(() => {});
    });
    const { id } = await (await fetch(`${admin}/api/apps/default/deploy`, { method: "POST", headers: auth })).json();
    await waitFor(() => gate.starts().length === 1, "the deploy to start");
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${admin}/api/deploys/${id}/log?follow=1`, { headers: auth });
      statuses.push(res.status);
      if (res.status === 200) {
        const reader = res.body!.getReader();
        await reader.read();
        open.push(reader);
      } else await res.text();
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  });

  test("a running deploy whose .log is not created yet (it follows the record): its log is empty, not a 404", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone);
    const { admin } = server;
    const id = runningRecordAlone(repo.clone, server.proc.pid);
    const log = await fetch(`${admin}/api/deploys/${id}/log`, { headers: auth });
    expect(log.status).toBe(200);
    expect(await log.text()).toBe("");
    const { body } = await getJson(`${admin}/api/deploys/${id}`);
    expect(body.status).toBe("running");
  });

  test("errors are JSON {error, message}: unknown app 404, unknown deploy 404, bad limit 400, unknown endpoint 404", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone);
    const { admin } = server;
    const cases: [string, string, number][] = [
      ["POST", "/api/apps/nope/deploy", 404],
      ["POST", "/api/apps/default/nothing", 404],
      ["GET", "/api/deploys/0123abcd", 404],
      ["GET", "/api/deploys/not-an-id!", 400],
      ["GET", "/api/deploys?limit=0", 400],
      ["GET", "/api/deploys?limit=abc", 400],
      ["GET", "/api/nothing", 404],
      ["GET", "/api/apps/%zz/deploy", 404],
    ];
    for (const [method, path, status] of cases) {
      const res = await fetch(`${admin}${path}`, { method, headers: auth });
      expect([path, res.status]).toEqual([path, status]);
      const body = await res.json();
      expect(typeof body.error).toBe("string");
      expect(typeof body.message).toBe("string");
    }
  });

  test("the admin token never appears in any log or response, even when the run script prints it", async () => {
    const repo = makeRepo();
    const file = join(tempDir(), "token.txt");
    writeFileSync(file, `token=${ADMIN_TOKEN}\n`);
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: `cat ${file}` });
    const { admin } = server;
    const { id } = await (await fetch(`${admin}/api/apps/default/deploy`, { method: "POST", headers: auth })).json();
    await waitFor(
      async () => (await getJson(`${admin}/api/deploys/${id}`)).body.status === "done",
      "the deploy to end",
    );
    const answers = await Promise.all(
      ["/api/apps", "/api/deploys", `/api/deploys/${id}`, `/api/deploys/${id}/log`, "/metrics", "/"].map((path) =>
        fetch(`${admin}${path}`, { headers: auth }).then((r) => r.text()),
      ),
    );
    const log = await fetch(`${admin}/api/deploys/${id}/log`, { headers: auth }).then((r) => r.text());
    expect(log).toContain("token=***");
    const dir = join(repo.clone, ".service", "logs");
    const files = readdirSync(dir).map((name) => readFileSync(join(dir, name), "utf8"));
    for (const text of [...answers, ...files, server.stdout.text, server.stderr.text])
      expect(text).not.toContain(ADMIN_TOKEN);
  });

  test("the run script does not get the admin token in its environment", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone, {
      SERVICE_RUN_SCRIPT: "sh -c 'echo token=${SERVICE_ADMIN_TOKEN:-unset}'",
    });
    const { admin } = server;
    const { id } = await (await fetch(`${admin}/api/apps/default/deploy`, { method: "POST", headers: auth })).json();
    await waitFor(
      async () => (await getJson(`${admin}/api/deploys/${id}`)).body.status === "done",
      "the deploy to end",
    );
    const log = await fetch(`${admin}/api/deploys/${id}/log`, { headers: auth }).then((r) => r.text());
    expect(log).toContain("token=unset");
  });

  test("a stop of the service ends the follow streams: it exits while a client follows a deploy of another process", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const env = { SERVICE_RUN_SCRIPT: gate.script, ...gate.env };
    await using server = await startAdmin(repo.clone, env);
    const { admin } = server;
    const cli = Bun.spawn([...CLI, "deploy"], { cwd: repo.clone, env: baseEnv(env), stdout: "pipe", stderr: "pipe" });
    await using _cleanup = defer(async () => {
      gate.open();
      await cli.exited;
    });
    await waitFor(() => gate.starts().length === 1, "the CLI deploy to start");
    const res = await fetch(`${admin}/api/deploys/last/log?follow=1`, { headers: auth });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("(cli)");
    server.proc.kill("SIGTERM");
    let ended = false;
    for (let i = 0; i < 1000; i++) {
      const { done } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
    }
    expect(ended).toBe(true);
    expect(await server.proc.exited).toBe(0);
    expect(cli.exitCode).toBeNull();
  });

  test("a request with a malformed Host header gets a JSON answer, not a crash", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone);
    const { admin } = server;
    const { port } = new URL(admin);
    const raw = async (host: string) => {
      let text = "";
      const done = new Promise<void>((resolve) => {
        void Bun.connect({
          hostname: "127.0.0.1",
          port: Number(port),
          socket: {
            open(socket) {
              socket.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
            },
            data(_socket, chunk) {
              text += chunk.toString();
            },
            close() {
              resolve();
            },
          },
        });
      });
      await Promise.race([done, Bun.sleep(5000)]);
      return text;
    };
    for (const host of ["[::1", "a b", "x:99999"]) {
      const text = await raw(host);
      expect(text).toMatch(/^HTTP\/1\.1 (200|400) /);
    }
    expect(server.proc.exitCode).toBeNull();
  });

  test("multi-app mode: /api/apps lists every app by name, a deploy of one runs in its repository, metrics count per app", async () => {
    const web = makeRepo();
    const api = makeRepo();
    const cwd = tempDir();
    writeFileSync(
      join(cwd, "service.yaml"),
      [
        "apps:",
        ...[
          ["web", web.clone],
          ["api", api.clone],
        ].flatMap(([name, repoPath]) => [
          `  - name: ${name}`,
          `    host: ${name}.example.com`,
          "    path: /deploy",
          `    repoPath: ${repoPath}`,
          `    runScript: echo deployed-${name}`,
          `    secret: ${SECRET}`,
        ]),
        "",
      ].join("\n"),
    );
    await using server = await startAdmin(cwd, { SERVICE_SECRET: undefined });
    const { admin } = server;
    const { body } = await getJson(`${admin}/api/apps`);
    expect(body.apps.map((a: any) => [a.name, a.repoPath])).toEqual([
      ["web", web.clone],
      ["api", api.clone],
    ]);
    const { id } = await (await fetch(`${admin}/api/apps/api/deploy`, { method: "POST", headers: auth })).json();
    const record = await waitFor(async () => {
      const { body: r } = await getJson(`${admin}/api/deploys/${id}`);
      return r.status === "done" ? r : undefined;
    }, "the deploy to end");
    expect(record).toMatchObject({ app: "api", repoPath: api.clone, trigger: "api" });
    expect((await getJson(`${admin}/api/deploys?app=web`)).body).toEqual([]);
    expect((await getJson(`${admin}/api/deploys?app=api`)).body.map((d: any) => d.id)).toEqual([id]);
    const metrics = await fetch(`${admin}/metrics`).then((r) => r.text());
    expect(metrics).toContain('service_deploys_total{app="api",outcome="ok"} 1');
    expect(metrics).toContain('service_deploys_waiting{app="web"} 0');
  });
});
