/**
 * Multi-app mode (docs/multi-app.md "Multi-app mode"): one server, several apps,
 * each routed by host + path, with its own repository, run script, secret and queue. Real repositories, the
 * real CLI, real HTTP; the Host header chooses the app.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { collectApps, resolveApps } from "../../src/config/apps.ts";
import { ConfigError, type AppConfig } from "../../src/config/schema.ts";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import { makeGate, serialized, StreamReader } from "../_support/gate.ts";
import {
  defer,
  lastLine,
  makeRepo,
  readJson,
  runCli,
  startServer,
  tempDir,
  waitFor,
  type Repo,
} from "../_support/helpers.ts";
import {
  deployRecords,
  jsonLogFiles,
  markerCount,
  markerScript,
  postAs,
  writeServiceYaml,
} from "../_support/webhook-fixtures.ts";

const WEB_SECRET = "web-secret-0123456789";
const API_SECRET = "api-secret-9876543210";
const ADMIN_SECRET = "admin-secret-5555555555";
const DONE_OK = "[done] ok=true exitCode=0";

function app(
  name: string,
  host: string,
  path: string,
  repo: Repo | string,
  runScript: string,
  extra: Record<string, unknown> = {},
) {
  return { name, host, path, repoPath: typeof repo === "string" ? repo : repo.clone, runScript, ...extra };
}

/**
 * Apps web and api on the same path of two hosts, each with its own repository, marker script and secret;
 * `topLevel` holds top-level keys of the config beside them.
 */
function twoAppsOnOnePath(topLevel: Record<string, unknown> = {}) {
  const [web, api] = [makeRepo(), makeRepo()];
  const markers = tempDir("service-markers-");
  const cwd = tempDir("service-apps-");
  writeServiceYaml(cwd, {
    ...topLevel,
    apps: [
      app("web", "web.example.com", "/hook", web, markerScript(markers, "web"), { secret: WEB_SECRET }),
      app("api", "api.example.com", "/hook", api, markerScript(markers, "api"), { secret: API_SECRET }),
    ],
  });
  return { web, api, markers, cwd };
}
describe("multi-app routing (the app is selected by host plus path)", () => {
  test("two apps on different hosts, same path: each request deploys only its own app; the banner lists both and Auth: required", async () => {
    const { web, api, markers, cwd } = twoAppsOnOnePath();
    const webRun = markerScript(markers, "web");
    const apiRun = markerScript(markers, "api");
    await using server = await startServer(cwd);
    const lines = server.stdout.text.split("\n");
    expect(lines).toContain(`listening on http://localhost:${server.port}`);
    expect(lines).toContain("Auth: required");
    for (const [name, host, repo, run] of [
      ["web", "web.example.com/hook", web.clone, webRun],
      ["api", "api.example.com/hook", api.clone, apiRun],
    ] as const) {
      expect(lines.some((l) => l.includes(name) && l.includes(host))).toBe(true);
      expect(lines.some((l) => l.includes(name) && l.includes(repo))).toBe(true);
      expect(lines.some((l) => l.includes(name) && l.includes(run))).toBe(true);
    }

    const first = await postAs(server.url, "web.example.com", "/hook", { secret: WEB_SECRET });
    expect(first.status).toBe(200);
    expect(lastLine(await first.text())).toBe(DONE_OK);
    expect([markerCount(markers, "web"), markerCount(markers, "api")]).toEqual([1, 0]);

    const second = await postAs(server.url, "api.example.com", "/hook", { secret: API_SECRET });
    expect(second.status).toBe(200);
    expect(lastLine(await second.text())).toBe(DONE_OK);
    expect([markerCount(markers, "web"), markerCount(markers, "api")]).toEqual([1, 1]);
    expect(readFileSync(join(markers, "api"), "utf8")).toBe("ran api\n");
  });

  test("three apps (same host with different paths, another host with the same path): each request deploys only its app", async () => {
    const site = makeRepo();
    const admin = makeRepo();
    const api = makeRepo();
    const markers = tempDir("service-markers-");
    const cwd = tempDir("service-apps-");
    writeServiceYaml(cwd, {
      apps: [
        app("site", "example.com", "/deploy/site", site, markerScript(markers, "site"), { secret: WEB_SECRET }),
        app("admin", "example.com", "/deploy/admin", admin, markerScript(markers, "admin"), { secret: ADMIN_SECRET }),
        app("api", "api.example.com", "/deploy/site", api, markerScript(markers, "api"), { secret: API_SECRET }),
      ],
    });
    await using server = await startServer(cwd);
    const lines = server.stdout.text.split("\n");
    for (const [name, route] of [
      ["site", "example.com/deploy/site"],
      ["admin", "example.com/deploy/admin"],
      ["api", "api.example.com/deploy/site"],
    ]) {
      expect(lines.some((l) => l.includes(name!) && l.includes(route!))).toBe(true);
    }
    expect(lines).toContain("Auth: required");
    const counts = () => ["site", "admin", "api"].map((n) => markerCount(markers, n));
    const steps: [string, string, string, number[]][] = [
      ["example.com", "/deploy/admin", ADMIN_SECRET, [0, 1, 0]],
      ["api.example.com", "/deploy/site", API_SECRET, [0, 1, 1]],
      ["example.com", "/deploy/site", WEB_SECRET, [1, 1, 1]],
      ["example.com", "/deploy/admin", ADMIN_SECRET, [1, 2, 1]],
    ];
    for (const [host, path, secret, expected] of steps) {
      const res = await postAs(server.url, host, path, { secret });
      expect(res.status).toBe(200);
      expect(lastLine(await res.text())).toBe(DONE_OK);
      expect(counts()).toEqual(expected);
    }
    // Each deploy ran in its own repository.
    expect(deployRecords(cwd).map((r) => r.repoPath)).toEqual([admin.clone, api.clone, site.clone, admin.clone]);
  });

  test("the host is matched case-insensitively with the port stripped; no app for host+path answers 404 and deploys nothing", async () => {
    const { markers, cwd } = twoAppsOnOnePath();
    await using server = await startServer(cwd);
    for (const [host, path] of [
      ["other.example.com", "/hook"], // unknown host
      ["web.example.com", "/other"], // known host, unknown path
      ["web.example.com", "/hook/"], // the path is exact
      ["web.example.com", "/"],
      [`localhost:${server.port}`, "/hook"], // the Host a client without a name sends
      ["web.example.com.evil.test", "/hook"],
    ]) {
      const res = await postAs(server.url, host, path!, { secret: WEB_SECRET });
      expect({ host, path, status: res.status }).toEqual({ host, path, status: 404 });
      expect((await res.json()).error).toBe("not found");
    }
    expect(jsonLogFiles(cwd)).toEqual([]);
    expect([markerCount(markers, "web"), markerCount(markers, "api")]).toEqual([0, 0]);

    for (const host of ["WEB.example.com:8080", "Web.Example.Com", "web.example.com:443"]) {
      const res = await postAs(server.url, host, "/hook", { secret: WEB_SECRET });
      expect(res.status).toBe(200);
      expect(lastLine(await res.text())).toBe(DONE_OK);
    }
    expect([markerCount(markers, "web"), markerCount(markers, "api")]).toEqual([3, 0]);
  });

  test("X-Forwarded-Host is ignored by default: the Host header routes", async () => {
    const { markers, cwd } = twoAppsOnOnePath();
    await using server = await startServer(cwd);
    // A client cannot reach app web by claiming it in X-Forwarded-Host.
    const spoofed = await postAs(server.url, "127.0.0.1", "/hook", {
      secret: WEB_SECRET,
      headers: { "x-forwarded-host": "web.example.com" },
    });
    expect(spoofed.status).toBe(404);
    await spoofed.text();
    // Host says api: api deploys, whatever X-Forwarded-Host says.
    const routed = await postAs(server.url, "api.example.com", "/hook", {
      secret: API_SECRET,
      headers: { "x-forwarded-host": "web.example.com" },
    });
    expect(routed.status).toBe(200);
    expect(lastLine(await routed.text())).toBe(DONE_OK);
    expect([markerCount(markers, "web"), markerCount(markers, "api")]).toEqual([0, 1]);
  });

  test("with trustProxy: true, X-Forwarded-Host (its first value, port stripped, any case) routes instead of Host", async () => {
    const { markers, cwd } = twoAppsOnOnePath({ trustProxy: true });
    await using server = await startServer(cwd);
    // What nginx or Caddy in front sends: Host is the upstream address, X-Forwarded-Host the public name.
    const viaProxy = await postAs(server.url, `127.0.0.1:${server.port}`, "/hook", {
      secret: WEB_SECRET,
      headers: { "x-forwarded-host": "WEB.example.com:443" },
    });
    expect(viaProxy.status).toBe(200);
    expect(lastLine(await viaProxy.text())).toBe(DONE_OK);
    const chain = await postAs(server.url, "web.example.com", "/hook", {
      secret: API_SECRET,
      headers: { "x-forwarded-host": "api.example.com, web.example.com" },
    });
    expect(chain.status).toBe(200);
    expect(lastLine(await chain.text())).toBe(DONE_OK);
    expect([markerCount(markers, "web"), markerCount(markers, "api")]).toEqual([1, 1]);
    // Without the header, Host still routes.
    const direct = await postAs(server.url, "api.example.com", "/hook", { secret: API_SECRET });
    expect(direct.status).toBe(200);
    expect(lastLine(await direct.text())).toBe(DONE_OK);
    expect([markerCount(markers, "web"), markerCount(markers, "api")]).toEqual([1, 2]);
  });
});

describe("secrets per app", () => {
  test("app A's secret gets 401 on app B and conversely, in every header; nothing runs", async () => {
    const { markers, cwd } = twoAppsOnOnePath();
    await using server = await startServer(cwd);
    for (const [host, wrong] of [
      ["web.example.com", API_SECRET],
      ["api.example.com", WEB_SECRET],
    ] as const) {
      const attempts: Record<string, string>[] = [
        { "x-service-secret": wrong },
        { authorization: `Bearer ${wrong}` },
        { "x-gitlab-token": wrong },
        {},
      ];
      for (const headers of attempts) {
        const res = await postAs(server.url, host, "/hook", { headers });
        expect({ host, headers, status: res.status }).toEqual({ host, headers, status: 401 });
        expect(res.headers.get("content-type")).toContain("application/json");
        expect((await res.json()).error).toBe("unauthorized");
      }
    }
    expect(jsonLogFiles(cwd)).toEqual([]);
    expect([markerCount(markers, "web"), markerCount(markers, "api")]).toEqual([0, 0]);
    const ok = await postAs(server.url, "api.example.com", "/hook", {
      headers: { authorization: `Bearer ${API_SECRET}` },
    });
    expect(lastLine(await ok.text())).toBe(DONE_OK);
    expect([markerCount(markers, "web"), markerCount(markers, "api")]).toEqual([0, 1]);
  });

  test("an app without a secret gets one at startup: in .service/secrets/<name>.secret (0600), printed once, stable across a restart, deploying that app only", async () => {
    const web = makeRepo();
    const api = makeRepo();
    const markers = tempDir("service-markers-");
    const cwd = tempDir("service-apps-");
    writeServiceYaml(cwd, {
      apps: [
        app("web", "web.example.com", "/hook", web, markerScript(markers, "web"), { secret: WEB_SECRET }),
        app("api", "api.example.com", "/hook", api, markerScript(markers, "api")),
      ],
    });
    const file = join(cwd, ".service", "secrets", "api.secret");
    let generated: string;
    {
      await using first = await startServer(cwd);
      expect(existsSync(file)).toBe(true);
      generated = readFileSync(file, "utf8").trim();
      expect(generated).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      // Printed once on this first start; the configured secret of web is never printed, nor given a file.
      expect(first.stdout.text.split(generated).length - 1).toBe(1);
      expect(first.stdout.text).toContain("api");
      expect(first.stdout.text).not.toContain(WEB_SECRET);
      expect(existsSync(join(cwd, ".service", "secrets", "web.secret"))).toBe(false);
      expect(existsSync(join(cwd, ".service.secret"))).toBe(false);

      const onWeb = await postAs(first.url, "web.example.com", "/hook", { secret: generated });
      expect(onWeb.status).toBe(401);
      await onWeb.text();
      const onApi = await postAs(first.url, "api.example.com", "/hook", { secret: generated });
      expect(onApi.status).toBe(200);
      expect(lastLine(await onApi.text())).toBe(DONE_OK);
      expect([markerCount(markers, "web"), markerCount(markers, "api")]).toEqual([0, 1]);
    }

    await using second = await startServer(cwd);
    expect(second.stdout.text).not.toContain(generated);
    expect(second.stderr.text).not.toContain(generated);
    expect(readFileSync(file, "utf8").trim()).toBe(generated);
    const again = await postAs(second.url, "api.example.com", "/hook", { secret: generated });
    expect(again.status).toBe(200);
    expect(lastLine(await again.text())).toBe(DONE_OK);
    expect([markerCount(markers, "web"), markerCount(markers, "api")]).toEqual([0, 2]);
  });
});

describe("validation at start (duplicate host+path, missing fields → a clear error naming the app)", () => {
  const valid = (name: string, host = `${name}.example.com`) => ({
    name,
    host,
    path: "/hook",
    repoPath: "/tmp",
    runScript: "echo hi",
  });
  const without = (field: string) => {
    const entry: Record<string, unknown> = valid("api");
    delete entry[field];
    return entry;
  };
  const cases: [string, Record<string, unknown>[], RegExp][] = [
    [
      "the same host (any case) and path as another app",
      [valid("web"), { ...valid("api"), host: "WEB.example.com" }],
      /api.*web\.example\.com.*\/hook|api.*already/,
    ],
    ["a duplicate name", [valid("web"), valid("web", "other.example.com")], /"web".*already|already.*"web"/],
    ["a key not allowed in an app (port)", [valid("web"), { ...valid("api"), port: 4000 }], /api.*"port"/],
    [
      "a key not allowed in an app (boundConnections)",
      [valid("web"), { ...valid("api"), boundConnections: true }],
      /api.*"boundConnections"/,
    ],
    ["an unknown key in an app", [valid("web"), { ...valid("api"), runscript: "echo typo" }], /api.*"runscript"/],
    ...["host", "path", "repoPath", "runScript"].map((field): [string, Record<string, unknown>[], RegExp] => [
      `a missing ${field}`,
      [valid("web"), without(field)],
      new RegExp(`api.*"${field}"`),
    ]),
    ["a missing name", [valid("web"), without("name")], /entry 2.*"name"/],
    ["a host written as a URL", [valid("web"), { ...valid("api"), host: "https://api.example.com/hook" }], /api.*host/],
    ["a blank secret", [valid("web"), { ...valid("api"), secret: "   " }], /api.*secret/],
  ];
  test("collectApps lists every bad entry at once, keeps the good ones, and a bad entry takes no name or route", () => {
    const apps = [
      valid("web"),
      { ...valid("api"), host: "https://api.example.com/hook" },
      without("runScript"),
      valid("api"),
      { ...valid("web"), host: "WEB.example.com" },
    ] as AppConfig[];
    const { apps: resolved, problems } = collectApps({ ...defaultConfig("/srv"), apps }, "/srv");
    expect(resolved.map((app) => app.name)).toEqual(["web", "api"]);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toStartWith('apps entry 2 ("api"): host');
    expect(problems[1]).toBe('apps entry 3 ("api"): "runScript" is required');
    expect(problems[2]).toBe('apps entry 5 ("web"): the name "web" is already used by apps entry 1');
    expect(() => resolveApps({ ...defaultConfig("/srv"), apps }, "/srv")).toThrow(new ConfigError(problems[0]!));
  });
  for (const [what, apps, message] of cases) {
    test(`${what}: the CLI exits non-zero with one clear line naming the app, no stack trace`, async () => {
      const cwd = tempDir("service-apps-");
      writeServiceYaml(cwd, { apps });
      const { code, stdout, stderr } = await runCli([], { cwd, env: { SERVICE_PORT: "0" }, timeoutMs: 20_000 });
      expect(code).not.toBe(0);
      expect(code).not.toBeNull();
      const output = `${stdout}${stderr}`;
      const lines = output.split("\n").filter((l) => l.trim() !== "");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(message);
      expect(output).not.toMatch(/^\s+at /m);
      expect(output).not.toContain("listening on");
    });
  }
});

describe("per-app settings (any top-level key may be set per app, the top level being the default)", () => {
  test("a top-level runTimeoutMs applies to an app that does not set it; an app's own runTimeoutMs wins", async () => {
    const inherits = makeRepo();
    const own = makeRepo();
    const cwd = tempDir("service-apps-");
    writeServiceYaml(cwd, {
      runTimeoutMs: 1000,
      apps: [
        app("inherits", "a.example.com", "/hook", inherits, "sleep 30", { secret: WEB_SECRET }),
        app("own", "b.example.com", "/hook", own, "sleep 3", { secret: API_SECRET, runTimeoutMs: 120_000 }),
      ],
    });
    await using server = await startServer(cwd);
    const [killed, finished] = await Promise.all([
      postAs(server.url, "a.example.com", "/hook?format=json", { secret: WEB_SECRET }).then((r) => r.json()),
      postAs(server.url, "b.example.com", "/hook?format=json", { secret: API_SECRET }).then((r) => r.json()),
    ]);
    expect(killed.ok).toBe(false);
    expect(killed.run.timedOut).toBe(true);
    expect(killed.error).toContain("timed out");
    expect(finished.ok).toBe(true);
    expect(finished.run.timedOut).toBe(false);
    expect(finished.run.exitCode).toBe(0);
  });

  test("an app's rollbackOnFailure is inherited from the top level unless the app sets its own", async () => {
    const inherits = makeRepo();
    const own = makeRepo();
    const cwd = tempDir("service-apps-");
    writeServiceYaml(cwd, {
      rollbackOnFailure: true,
      apps: [
        app("inherits", "a.example.com", "/hook", inherits, "false", { secret: WEB_SECRET }),
        app("own", "b.example.com", "/hook", own, "false", { secret: API_SECRET, rollbackOnFailure: false }),
      ],
    });
    await using server = await startServer(cwd);
    // A new commit each: a pull that changed nothing has nothing to roll back to.
    inherits.push({ "x.txt": "x\n" });
    own.push({ "x.txt": "x\n" });
    const rolled = await (
      await postAs(server.url, "a.example.com", "/hook?format=json", { secret: WEB_SECRET })
    ).json();
    const plain = await (await postAs(server.url, "b.example.com", "/hook?format=json", { secret: API_SECRET })).json();
    expect(rolled.ok).toBe(false);
    expect(rolled.rollback).toBeDefined();
    expect(plain.ok).toBe(false);
    expect(plain.rollback).toBeUndefined();
  });
});

describe('post-pull reload per app (docs/configuration.md "Config from the repository": each app reloads from its own repository)', () => {
  test("a service.yaml pushed to an app's repository sets that app's run script after the pull; the other app keeps its own", async () => {
    const web = makeRepo();
    const api = makeRepo();
    const cwd = tempDir("service-apps-");
    writeServiceYaml(cwd, {
      apps: [
        app("web", "web.example.com", "/hook", web, "echo web-from-service-file", { secret: WEB_SECRET }),
        app("api", "api.example.com", "/hook", api, "echo api-from-service-file", { secret: API_SECRET }),
      ],
    });
    web.push({ "service.yaml": "runScript: echo web-from-its-repo\n" }, "the repository says how it deploys");
    await using server = await startServer(cwd);
    const w = await (await postAs(server.url, "web.example.com", "/hook?format=json", { secret: WEB_SECRET })).json();
    const a = await (await postAs(server.url, "api.example.com", "/hook?format=json", { secret: API_SECRET })).json();
    expect(w.run.stdout).toBe("web-from-its-repo\n");
    expect(a.run.stdout).toBe("api-from-service-file\n");
  });

  test("when the multi-app service.yaml lives in an app's repository, its top-level runScript (the default) does not replace the app's own after the pull", async () => {
    const repo = makeRepo();
    writeServiceYaml(repo.clone, {
      runScript: "echo top-level-default",
      apps: [app("web", "web.example.com", "/hook", ".", "echo app-own-script", { secret: WEB_SECRET })],
    });
    await using server = await startServer(repo.clone);
    const result = await (
      await postAs(server.url, "web.example.com", "/hook?format=json", { secret: WEB_SECRET })
    ).json();
    expect(result.run.stdout).toBe("app-own-script\n");
  });
});

describe('concurrency between apps (docs/deploy-control.md "Queue": a queue per repoPath)', () => {
  test("two apps on different repositories deploy at the same time: B completes while A is blocked", async () => {
    const blocked = makeRepo();
    const free = makeRepo();
    const gate = makeGate();
    const cwd = tempDir("service-apps-");
    writeServiceYaml(cwd, {
      apps: [
        app("a", "a.example.com", "/hook", blocked, gate.script, { secret: WEB_SECRET }),
        app("b", "b.example.com", "/hook", free, "echo b-deployed", { secret: API_SECRET }),
      ],
    });
    await using server = await startServer(cwd, gate.env);
    await using _cleanup = defer(() => gate.open());
    const a = new StreamReader(await postAs(server.url, "a.example.com", "/hook", { secret: WEB_SECRET }));
    await waitFor(() => gate.lines().length === 1, "app a's script to start");
    const b = await (await postAs(server.url, "b.example.com", "/hook?format=json", { secret: API_SECRET })).json();
    expect(b.ok).toBe(true);
    expect(b.run.stdout).toContain("b-deployed");
    expect(gate.lines()).toHaveLength(1); // a is still at its gate
    expect(a.text).not.toContain("[done]");
    gate.open();
    expect(lastLine(await a.done)).toBe(DONE_OK);
    expect(a.text).not.toContain("[queued]");
  });

  test("two apps sharing one repoPath share one queue: the second waits ([queued] waiting; position=1) and the runs never overlap", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const cwd = tempDir("service-apps-");
    writeServiceYaml(cwd, {
      apps: [
        app("site", "example.com", "/site", repo, gate.script, { secret: WEB_SECRET }),
        app("preview", "preview.example.com", "/site", repo, gate.script, { secret: API_SECRET }),
      ],
    });
    await using server = await startServer(cwd, gate.env);
    await using _cleanup = defer(() => gate.open());
    const first = new StreamReader(await postAs(server.url, "example.com", "/site", { secret: WEB_SECRET }));
    await waitFor(() => gate.lines().length === 1, "the first app's script to start");
    const second = new StreamReader(await postAs(server.url, "preview.example.com", "/site", { secret: API_SECRET }));
    await waitFor(() => second.text.includes("\n"), "the second request's first line");
    expect(second.text.split("\n")[0]).toBe("[queued] waiting; position=1");
    expect(gate.lines()).toHaveLength(1);
    gate.open();
    const [a, b] = await Promise.all([first.done, second.done]);
    expect(lastLine(a)).toBe(DONE_OK);
    expect(lastLine(b)).toBe(DONE_OK);
    expect(gate.starts()).toEqual([first.id()!, second.id()!]);
    expect(serialized(gate.lines())).toBe(true);
  });
});

describe("what a deploy knows of its app (the log JSON names the app)", () => {
  test("the run script's environment has SERVICE_APP=<name>", async () => {
    const web = makeRepo();
    const api = makeRepo();
    const cwd = tempDir("service-apps-");
    writeServiceYaml(cwd, {
      apps: [
        app("web", "web.example.com", "/hook", web, 'echo "app=$SERVICE_APP"', { secret: WEB_SECRET }),
        app("api", "api.example.com", "/hook", api, 'echo "app=$SERVICE_APP"', { secret: API_SECRET }),
      ],
    });
    await using server = await startServer(cwd);
    const w = await (await postAs(server.url, "web.example.com", "/hook?format=json", { secret: WEB_SECRET })).json();
    const a = await (await postAs(server.url, "api.example.com", "/hook?format=json", { secret: API_SECRET })).json();
    expect(w.run.stdout).toBe("app=web\n");
    expect(a.run.stdout).toBe("app=api\n");
  });

  test("the .json log of a multi-app deploy names the app", async () => {
    const web = makeRepo();
    const api = makeRepo();
    const cwd = tempDir("service-apps-");
    writeServiceYaml(cwd, {
      apps: [
        app("web", "web.example.com", "/hook", web, "echo web", { secret: WEB_SECRET }),
        app("api", "api.example.com", "/hook", api, "echo api", { secret: API_SECRET }),
      ],
    });
    await using server = await startServer(cwd);
    const result = await (
      await postAs(server.url, "api.example.com", "/hook?format=json", { secret: API_SECRET })
    ).json();
    expect(result.ok).toBe(true);
    const record = readJson(join(cwd, result.log.json));
    expect(record.status).toBe("done");
    expect(record.repoPath).toBe(api.clone);
    expect(record.app).toBe("api");
  });
});
