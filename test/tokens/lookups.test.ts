/**
 * docs/admin.md "Tokens": a token scoped to apps sees its apps only, wherever it looks: a deploy it names is looked
 * up once among its apps' deploys (queued ones included) and acted on by the id found; no answer tells it another
 * app's deploy ids or names, `/metrics` shows its apps only, and a token that is not admin is told no directory of
 * the server.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN, bearer, startAdmin } from "../_support/admin-helpers.ts";
import { makeGate } from "../_support/gate.ts";
import { defer, hasEnded, waitFor } from "../_support/helpers.ts";
import { standardTokens, TOKEN_VALUES, tokenSetup, writeToken } from "../_support/token-fixtures.ts";

const CI_API = "ci-api-token-0123456789abcdef";

type Answer = { status: number; body: any; text: string };

/** A request to the admin listener with `token`; the JSON body when there is one. */
async function call(url: string, token: string, body?: unknown): Promise<Answer> {
  const res = await fetch(url, {
    method: body === undefined ? "GET" : "POST",
    headers: { ...bearer(token), "content-type": "application/json", "x-forwarded-for": "10.0.0.9" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed, text };
}

/** The server of `setup`, a deploy of web and one of api made with the admin token, both ended. */
async function twoEndedDeploys() {
  const setup = tokenSetup();
  const server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
  const ids: Record<"web" | "api", string> = { web: "", api: "" };
  for (const app of ["web", "api"] as const)
    ids[app] = (await call(`${server.admin}/api/apps/${app}/deploy`, ADMIN_TOKEN, {})).body.id;
  for (const id of Object.values(ids))
    await waitFor(async () => {
      const record = await call(`${server.admin}/api/deploys/${id}`, ADMIN_TOKEN);
      return record.status === 200 && hasEnded(record.body.status);
    }, `deploy ${id} to end`);
  return { setup, server, ids };
}

/** Copies the files of deploy `id` (in the history, or queued) under `twin`: another deploy, as the service writes it. */
function twinOf(dir: string, names: string[], id: string, twin: string): string[] {
  return names.map((name) => {
    const file = join(dir, name.replace(id, twin));
    writeFileSync(file, readFileSync(join(dir, name), "utf8").replaceAll(id, twin));
    return file;
  });
}

describe("what a token scoped to apps names, it names among its apps' deploys only", () => {
  test("deploy and rollback with another app's deploy as `ref` or `to`: no answer names that deploy's id or app", async () => {
    const { setup, server, ids } = await twoEndedDeploys();
    await using _server = server;
    const web = `${server.admin}/api/apps/web`;
    const ci = TOKEN_VALUES["ci-web"];
    const answers = [
      await call(`${web}/deploy`, ci, { ref: ids.api }),
      await call(`${web}/deploy`, ci, { ref: ids.api.slice(0, 8) }),
      await call(`${web}/rollback`, ci, { to: ids.api }),
      await call(`${web}/rollback`, ci, { to: ids.api.slice(0, 8) }),
    ];
    expect(answers.map((a) => [a.status, a.body.error])).toEqual([
      [400, "unknown ref"],
      [400, "unknown ref"],
      [409, "no rollback target"],
      [409, "no rollback target"],
    ]);
    for (const [i, { text, body }] of answers.entries()) {
      // A full id is the request's own words; a prefix is never completed.
      if (i % 2) expect(text).not.toContain(ids.api.slice(8));
      expect(body.message).not.toContain('"api"');
      // Nor a directory of the server: a deploy token is not admin.
      for (const dir of [setup.cwd, setup.repos.web.clone, setup.repos.api.clone]) expect(text).not.toContain(dir);
    }
    expect(answers[0]!.body.message).toContain("<repoPath>");

    // A deploy of api whose id starts as web's: the prefix names web's deploy for this token, and only it.
    const logs = join(setup.cwd, ".service", "logs");
    const twin = `${ids.web.slice(0, 8)}${ids.api.slice(8)}`;
    const names = readdirSync(logs).filter((name) => name.includes(ids.api));
    twinOf(logs, names, ids.api, twin);
    const prefix = ids.web.slice(0, 8);
    expect((await call(`${web}/deploy`, ADMIN_TOKEN, { ref: prefix })).status).toBe(409);
    const again = await call(`${web}/deploy`, ci, { ref: prefix });
    expect(again.status).toBe(200);
    expect(again.text).not.toContain(twin);
    await waitFor(async () => {
      const record = await call(`${server.admin}/api/deploys/${again.body.id}`, ADMIN_TOKEN);
      return record.status === 200 && hasEnded(record.body.status) ? record.body : undefined;
    }, "the deploy again to end");
    const record = (await call(`${server.admin}/api/deploys/${again.body.id}`, ADMIN_TOKEN)).body;
    expect(record.result.target).toMatchObject({ deployId: ids.web, ref: prefix });
  });

  test("cancel: a deploy is looked up once among the token's apps, queued ones included, and cancelled by the id found", async () => {
    const gate = makeGate();
    const setup = tokenSetup(gate.script);
    writeToken(setup.file("ci-api"), CI_API);
    setup.config([
      ...standardTokens(setup.file),
      `  - { name: ci-api, role: deploy, apps: [api], file: ${setup.file("ci-api")} }`,
    ]);
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined, ...gate.env });
    await using _open = defer(() => gate.open());
    const { admin } = server;
    const deploy = async (app: string) =>
      (await call(`${admin}/api/apps/${app}/deploy`, ADMIN_TOKEN, {})).body.id as string;
    const running = await deploy("api");
    await waitFor(() => gate.starts().includes(running), "api's first deploy to run");
    const queued = await deploy("api");
    const queuedDir = join(setup.cwd, ".service", "requests");
    await waitFor(() => existsSync(join(queuedDir, `${queued}.json`)), "api's second deploy to wait");
    const web = await deploy("web");
    await waitFor(() => gate.starts().includes(web), "web's deploy to run");

    const ci = TOKEN_VALUES["ci-web"];
    const cancel = (ref: string, token: string) => call(`${admin}/api/deploys/${ref}/cancel`, token, {});
    // Another app's deploys are not there for web's token, running or queued; they go on.
    for (const id of [queued, running, queued.slice(0, 8)]) {
      const refused = await cancel(id, ci);
      expect({ id, status: refused.status }).toEqual({ id, status: 404 });
      expect(refused.text).not.toContain(setup.cwd);
    }
    expect(existsSync(join(queuedDir, `${queued}.json`))).toBe(true);

    // A queued deploy of api whose id starts as web's running one does: the prefix cancels web's, the one it sees.
    const [twinFile] = twinOf(queuedDir, [`${queued}.json`], queued, `${web.slice(0, 8)}${queued.slice(8)}`);
    const cancelled = await cancel(web.slice(0, 8), ci);
    rmSync(twinFile!);
    expect(cancelled).toMatchObject({ status: 200, body: { id: web, state: "cancelled" } });

    // api's token cancels api's queued deploy, by its id.
    const own = await cancel(queued.slice(0, 8), CI_API);
    expect(own).toMatchObject({ status: 200, body: { id: queued, state: "cancelled" } });
    gate.open();
    const ended = await waitFor(async () => {
      const record = await call(`${admin}/api/deploys/${running}`, ADMIN_TOKEN);
      return hasEnded(record.body.status) ? record.body : undefined;
    }, "api's first deploy to end");
    expect(ended.status).toBe("done");
  });

  test("/metrics shows a token scoped to apps the counters of its apps only, and no other token's refusals", async () => {
    const { server } = await twoEndedDeploys();
    await using _server = server;
    expect((await call(`${server.admin}/api/apps/web/pause`, TOKEN_VALUES.grafana, {})).status).toBe(403);
    const all = (await call(`${server.admin}/metrics`, ADMIN_TOKEN)).text;
    for (const line of ['service_deploys_total{app="api"', 'service_paused{app="api"}', 'token="grafana"'])
      expect(all).toContain(line);
    const mine = await call(`${server.admin}/metrics`, TOKEN_VALUES["ci-web"]);
    expect(mine.status).toBe(200);
    expect(mine.text).toContain('service_deploys_total{app="web",outcome="ok"} 1');
    expect(mine.text).toContain('service_paused{app="web"} 0');
    expect(mine.text).not.toContain('"api"');
    expect(mine.text).not.toContain('token="grafana"');
  });

  test("a token that is not admin is told no directory of the server: /api/apps has no repoPath, /api/deploys no file paths, a 404 no log directory", async () => {
    const { setup, server } = await twoEndedDeploys();
    await using _server = server;
    const dirs = [setup.cwd, setup.repos.web.clone, setup.repos.api.clone];
    for (const token of [TOKEN_VALUES.grafana, TOKEN_VALUES["ci-web"]]) {
      const apps = await call(`${server.admin}/api/apps`, token);
      const deploys = await call(`${server.admin}/api/deploys`, token);
      expect(apps.body.apps[0].name).toBe("web");
      expect(apps.body.apps[0]).not.toHaveProperty("repoPath");
      expect(deploys.body[0].app).toBeString();
      expect(deploys.body[0]).not.toHaveProperty("jsonPath");
      for (const dir of dirs) expect(`${apps.text}${deploys.text}`).not.toContain(dir);
    }
    for (const token of [ADMIN_TOKEN, TOKEN_VALUES.ops]) {
      const apps = await call(`${server.admin}/api/apps`, token);
      expect(apps.body.apps.map((app: { repoPath: string }) => app.repoPath)).toEqual([
        setup.repos.web.clone,
        setup.repos.api.clone,
      ]);
      expect((await call(`${server.admin}/api/deploys`, token)).body[0].jsonPath).toStartWith(setup.cwd);
    }
    for (const token of [ADMIN_TOKEN, TOKEN_VALUES.grafana]) {
      const missing = await call(`${server.admin}/api/deploys/00000000`, token);
      expect(missing.status).toBe(404);
      expect(missing.body.message).toBe('no deploy "00000000"');
    }
  });
});
