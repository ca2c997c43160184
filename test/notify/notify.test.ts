import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveApps } from "../../src/config/apps.ts";
import { loadConfig } from "../../src/config/load.ts";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import { runDeploy } from "../../src/deploy/pipeline.ts";
import { OutboundCalls } from "../../src/notify/outbound.ts";
import { outboundSinks } from "../../src/notify/sink.ts";
import type { NotifyTarget, StatusSettings } from "../../src/config/schema-notify.ts";
import {
  logFiles,
  makeLocalRepo,
  makeRepo,
  post,
  readJson,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
} from "../_support/helpers.ts";
import { makeGate, StreamReader } from "../_support/gate.ts";
import { spawnCli } from "../_support/ops-helpers.ts";
import { closedUrl, fakeApi } from "../_support/outbound-fixtures.ts";
import { outcomes } from "../_support/outbound-outcomes.ts";

const WEBHOOK_SECRET = "webhook-secret-0123456789";
const HEADER_TOKEN = "endpoint-token-9876543210";

/** The outbound calls of the deploys below, as a server tracks its own. */
const calls = new OutboundCalls();

async function deploy(
  repoPath: string,
  notify: NotifyTarget[],
  options: { runScript?: string; rollbackOnFailure?: boolean; app?: string; status?: StatusSettings } = {},
) {
  const cwd = tempDir();
  const config = {
    ...defaultConfig(cwd),
    repoPath,
    runScript: options.runScript ?? "echo deployed",
    rollbackOnFailure: options.rollbackOnFailure ?? false,
    notify,
    status: options.status,
  };
  return runDeploy({
    id: crypto.randomUUID(),
    outbound: outboundSinks(calls),
    config,
    trigger: "webhook",
    cwd,
    app: options.app,
    secrets: [WEBHOOK_SECRET],
  });
}

const FAILING = `sh -c 'for i in $(seq 1 30); do echo "line $i"; done; echo "key ${WEBHOOK_SECRET}"; exit 4'`;

describe("notifications", () => {
  test("json: the documented payload, with the last 20 lines of output, redacted", async () => {
    const api = fakeApi([201]);
    const repo = makeRepo();
    const before = repo.head();
    const after = repo.push({ "v.txt": "2\n" });
    const result = await deploy(repo.clone, [{ url: `${api.url}/hook`, format: "json" }], {
      runScript: FAILING,
      app: "web",
      status: {
        provider: "github",
        repo: "acme/web",
        apiUrl: `${api.url}/forge`,
        token: "forge-token-123456",
        targetUrl: "https://d.example.com/{id}",
      },
    });
    await outcomes(result.log.json, 3);
    const hook = api.seen.find((s) => s.path === "/hook")!;
    expect(hook.method).toBe("POST");
    expect(hook.headers["content-type"]).toBe("application/json");
    const payload = hook.json();
    expect(Object.keys(payload).sort()).toEqual(
      [
        "id",
        "app",
        "trigger",
        "actor",
        "ref",
        "forced",
        "event",
        "delivery",
        "commit",
        "target",
        "outcome",
        "ok",
        "rolledBack",
        "exitCode",
        "durationMs",
        "error",
        "rollback",
        "output",
        "targetUrl",
      ].sort(),
    );
    expect(payload).toMatchObject({
      id: result.id,
      app: "web",
      trigger: "webhook",
      event: null,
      delivery: null,
      commit: { before, after },
      outcome: "failed",
      ok: false,
      rolledBack: false,
      exitCode: 4,
      durationMs: result.durationMs,
      error: result.error,
      rollback: null,
      targetUrl: `https://d.example.com/${result.id}`,
    });
    expect(payload.output).toHaveLength(20);
    expect(payload.output).toContain("key ***");
    expect(JSON.stringify(payload)).not.toContain(WEBHOOK_SECRET);
  });

  test("on: by default failed and rolled_back only; a succeeded deploy notifies the targets that ask for it", async () => {
    const api = fakeApi([201]);
    const repo = makeLocalRepo();
    const result = await deploy(repo, [{ url: `${api.url}/default` }, { url: `${api.url}/ok`, on: ["succeeded"] }]);
    expect(result.ok).toBe(true);
    await outcomes(result.log.json, 1);
    await calls.settle(30_000);
    expect(api.seen.map((s) => [s.path, s.json().outcome])).toEqual([["/ok", "succeeded"]]);
  });

  test("on: started is sent when the deploy starts, naming the pulled commit", async () => {
    const api = fakeApi([201]);
    const repo = makeRepo();
    const before = repo.head();
    const after = repo.push({ "v.txt": "2\n" });
    const result = await deploy(repo.clone, [{ url: api.url, on: ["started"] }]);
    const list = await outcomes(result.log.json, 1);
    expect(list[0]).toMatchObject({ kind: "notify", target: "json", what: "started", ok: true });
    expect(api.seen[0]!.json()).toMatchObject({
      outcome: "started",
      ok: null,
      exitCode: null,
      durationMs: null,
      commit: { before, after },
    });
  });

  test("rolled_back: a rolled-back deploy says so, with the rollback", async () => {
    const api = fakeApi([201]);
    const repo = makeRepo({ "deploy.sh": "exit 0\n" });
    const before = repo.head();
    repo.push({ "deploy.sh": "exit 1\n" });
    const result = await deploy(repo.clone, [{ url: api.url }], { runScript: "sh deploy.sh", rollbackOnFailure: true });
    await outcomes(result.log.json, 1);
    expect(api.seen[0]!.json()).toMatchObject({
      outcome: "rolled_back",
      rolledBack: true,
      ok: true,
      rollback: { to: before, ok: true },
    });
  });

  test("slack: {text} to the incoming webhook; discord: {content} of at most 2000 characters", async () => {
    const api = fakeApi([201]);
    const repo = makeLocalRepo();
    const long = `sh -c 'for i in $(seq 1 40); do printf "%0200d\\n" 0; done; echo "<!channel> @everyone"; exit 1'`;
    const result = await deploy(
      repo,
      [
        { url: `${api.url}/slack`, format: "slack" },
        { url: `${api.url}/discord`, format: "discord" },
      ],
      { runScript: long },
    );
    await outcomes(result.log.json, 2);
    const slack = api.seen.find((s) => s.path === "/slack")!.json();
    const discord = api.seen.find((s) => s.path === "/discord")!.json();
    expect(Object.keys(slack)).toEqual(["text"]);
    expect(slack.text).toStartWith("deploy FAILED");
    expect(slack.text).toContain("&lt;!channel&gt; @everyone");
    expect(Object.keys(discord)).toEqual(["content", "allowed_mentions"]);
    expect(discord.allowed_mentions).toEqual({ parse: [] });
    expect(discord.content.length).toBeLessThanOrEqual(2000);
    expect(discord.content).toStartWith("deploy FAILED");
  });

  test("ntfy: the message as the body, with Title, Priority and Tags headers", async () => {
    const api = fakeApi([200]);
    const repo = makeLocalRepo();
    const result = await deploy(repo, [{ url: `${api.url}/deploys`, format: "ntfy" }], {
      runScript: "false",
      app: "web",
    });
    await outcomes(result.log.json, 1);
    const seen = api.seen[0]!;
    expect(seen.headers["content-type"]).toStartWith("text/plain");
    expect([seen.headers.title, seen.headers.priority, seen.headers.tags]).toEqual(["deploy web failed", "high", "x"]);
    expect(seen.body).toStartWith("deploy of web FAILED");
  });

  test("headers: the entry's own headers are sent, and never written to the log", async () => {
    const api = fakeApi([201]);
    const repo = makeLocalRepo();
    const result = await deploy(repo, [
      { url: api.url, on: ["succeeded"], headers: { Authorization: `Bearer ${HEADER_TOKEN}` } },
    ]);
    await outcomes(result.log.json, 1);
    expect(api.seen[0]!.headers.authorization).toBe(`Bearer ${HEADER_TOKEN}`);
    expect(readFileSync(result.log.log, "utf8")).toContain("[notify] json: succeeded notification sent");
    expect(readFileSync(result.log.json, "utf8")).not.toContain(HEADER_TOKEN);
  });
});

describe("outbound calls", () => {
  test("retries with backoff on 5xx: three tries, then failed in the log", async () => {
    const api = fakeApi([500]);
    const repo = makeLocalRepo();
    const result = await deploy(repo, [{ url: api.url, on: ["succeeded"] }]);
    const list = await outcomes(result.log.json, 1);
    expect(api.seen).toHaveLength(3);
    expect(list[0]).toMatchObject({ ok: false, detail: expect.stringMatching(/^500/) });
    expect(readFileSync(result.log.log, "utf8")).toContain("[notify] json failed: 500");
  });

  test("a 5xx then a 201: sent on the second try", async () => {
    const api = fakeApi([502, 201]);
    const repo = makeLocalRepo();
    const result = await deploy(repo, [{ url: api.url, on: ["succeeded"] }]);
    const list = await outcomes(result.log.json, 1);
    expect(api.seen).toHaveLength(2);
    expect(list[0].ok).toBe(true);
  });

  test("no retry on 4xx; the answer is logged with secrets redacted", async () => {
    const api = fakeApi([401]);
    api.errorBody = `{"message":"bad token Bearer ${HEADER_TOKEN}"}`;
    const repo = makeLocalRepo();
    const result = await deploy(repo, [
      { url: api.url, on: ["succeeded"], headers: { authorization: `Bearer ${HEADER_TOKEN}` } },
    ]);
    const list = await outcomes(result.log.json, 1);
    await calls.settle(30_000);
    expect(api.seen).toHaveLength(1);
    expect(list[0].detail).toContain("401");
    expect(list[0].detail).toContain("***");
    for (const file of [result.log.log, result.log.json])
      expect(readFileSync(file, "utf8")).not.toContain(HEADER_TOKEN);
  });

  test("retries after a network error, then says so", async () => {
    const repo = makeLocalRepo();
    const result = await deploy(repo, [{ url: closedUrl(), on: ["succeeded"] }]);
    const list = await outcomes(result.log.json, 1);
    expect(list[0]).toMatchObject({ ok: false, detail: expect.stringMatching(/^network error/) });
  });

  test("time limit: an endpoint that does not answer is given up after timeoutMs, each of the three tries", async () => {
    const api = fakeApi(["hang"]);
    const repo = makeLocalRepo();
    const result = await deploy(repo, [{ url: api.url, on: ["succeeded"], timeoutMs: 200 }]);
    const list = await outcomes(result.log.json, 1);
    expect(api.seen).toHaveLength(3);
    expect(list[0]).toMatchObject({ ok: false, detail: "no answer within 200 ms" });
    api.release();
  });

  test("the [done] line does not wait; a call that ends after the record was finished is appended to both files", async () => {
    const api = fakeApi(["hang"]);
    const repo = makeLocalRepo();
    const result = await deploy(repo, [{ url: api.url, on: ["succeeded"] }]);
    // The deploy is over while the endpoint still holds the call.
    await waitFor(() => api.held() === 1, "the held call");
    expect(readJson(result.log.json)).toMatchObject({ status: "done" });
    expect(readJson(result.log.json).outbound).toBeUndefined();
    api.release();
    const list = await outcomes(result.log.json, 1);
    expect(list[0]).toMatchObject({ ok: true, what: "succeeded" });
    const log = readFileSync(result.log.log, "utf8");
    expect(log.indexOf("[notify] json: succeeded notification sent")).toBeGreaterThan(log.indexOf("[done] ok=true"));
  });
});

describe("service check and shutdown", () => {
  function serviceDir(yaml: string): string {
    const repo = makeLocalRepo();
    const dir = tempDir();
    writeFileSync(join(dir, "service.yaml"), `repoPath: ${repo}\nsecret: ${SECRET}\n${yaml}`);
    return dir;
  }

  test("check says what is wrong: a provider it cannot infer, a missing token, an unknown on value", async () => {
    const dir = serviceDir(
      `status:\n  repo: acme/web\nnotify:\n  - url: https://hooks.example.com/x\n    on: [failed, exploded]\n`,
    );
    const { code, stdout } = await runCli(["check"], { cwd: dir });
    expect(code).toBe(1);
    expect(stdout).toContain('on: unknown event "exploded"');
    const second = await runCli(["check"], { cwd: serviceDir(`status:\n  provider: github\n  repo: acme/web\n`) });
    expect(second.code).toBe(1);
    expect(second.stdout).toContain("status: no token: set token, tokenFile or SERVICE_STATUS_TOKEN");
    const third = await runCli(["check"], { cwd: serviceDir(`status:\n  token: forge-token-abcdef\n`) });
    expect(third.stdout).toContain("status: set provider (github, gitlab, gitea, bitbucket)");
    const fourth = await runCli(["check"], {
      cwd: serviceDir(
        `status: { provider: gitea, apiUrl: "https://git.example.com/api/v1", repo: acme/web, token: forge-token-abcdef, deployments: true }\n`,
      ),
    });
    expect(fourth.stdout).toContain("status: deployments is GitHub's and GitLab's only");
    const fifth = await runCli(["check"], {
      cwd: serviceDir(`deploymentEvents: true\nstatus: { provider: gitlab, repo: 7, token: forge-token-abcdef }\n`),
    });
    expect(fifth.code).toBe(1);
    expect(fifth.stdout).toContain("deploymentEvents: deployment events are GitHub's; status names gitlab");
  });

  test("check masks the status token and shows no notify URL path or header value", async () => {
    const dir = serviceDir(
      `status:\n  provider: github\n  repo: acme/web\n  token: forge-token-abcdef\nnotify:\n  - url: https://hooks.slack.com/services/T0/B0/secretpart\n    format: slack\n    headers: { X-Key: ${HEADER_TOKEN} }\n`,
    );
    const { code, stdout } = await runCli(["check"], { cwd: dir });
    expect(stdout).toContain("token set (18 characters, hidden)");
    expect(stdout).toContain("slack to hooks.slack.com on failed/rolled_back");
    for (const secret of ["forge-token-abcdef", "secretpart", HEADER_TOKEN]) expect(stdout).not.toContain(secret);
    expect(code).toBe(0);
  });

  test("check --send-test sends one test notification per target and reports each answer", async () => {
    const good = fakeApi([201]);
    const bad = fakeApi([401]);
    const dir = serviceDir(`notify:\n  - url: ${good.url}/a\n  - url: ${bad.url}/b\n    format: slack\n`);
    const { code, stdout } = await runCli(["check", "--send-test"], { cwd: dir });
    expect(good.seen.map((s) => s.json()).map((p) => [p.test, p.outcome])).toEqual([[true, "failed"]]);
    expect(bad.seen[0]!.json().text).toStartWith("Test notification");
    expect(stdout).toContain("notify entry 1 (json to 127.0.0.1");
    expect(stdout).toMatch(/notify entry 1 \(json to [^)]+\): sent: 201/);
    expect(stdout).toMatch(/notify entry 2 \(slack to [^)]+\): failed: 401/);
    expect(code).toBe(1);
  });

  test("check --send-test sends a target that several apps inherit once", async () => {
    const api = fakeApi([201]);
    const [web, docs] = [makeLocalRepo(), makeLocalRepo()];
    const dir = tempDir();
    const app = (name: string, repoPath: string) =>
      `  - { name: ${name}, host: ${name}.example.com, path: /, repoPath: ${repoPath}, runScript: "true" }`;
    writeFileSync(
      join(dir, "service.yaml"),
      [`notify: [{ url: "${api.url}/shared" }]`, "apps:", app("web", web), app("docs", docs)].join("\n"),
    );
    const { code, stdout } = await runCli(["check", "--send-test"], { cwd: dir });
    expect(api.seen.map((s) => s.path)).toEqual(["/shared"]);
    expect(stdout).toContain("app web, notify entry 1 (json to ");
    expect(stdout).toContain("    notify: json to 127.0.0.1:");
    expect(code).toBe(0);
  });

  test("service deploy sends its notifications before it exits", async () => {
    const api = fakeApi([201]);
    const dir = serviceDir(`runScript: "false"\nnotify:\n  - url: ${api.url}\n`);
    const { code } = await runCli(["deploy", "--cwd", dir], { cwd: dir });
    expect(code).toBe(1);
    expect(api.seen.map((s) => s.json().outcome)).toEqual(["failed"]);
    const json = logFiles(dir).find((name) => name.endsWith(".json"))!;
    expect(readJson(join(dir, ".service", "logs", json)).outbound).toMatchObject([{ kind: "notify", ok: true }]);
  });

  test("service deploy: Ctrl-C while it waits for its notifications ends the wait; the call is recorded as not sent", async () => {
    const api = fakeApi(["hang"]);
    const dir = serviceDir(`runScript: "true"\nnotify:\n  - url: ${api.url}\n    on: [succeeded]\n`);
    await using cli = spawnCli(["deploy", "--cwd", dir], { cwd: dir });
    await waitFor(
      () => api.held() === 1 && cli.stdout.text.includes("[done] ok=true"),
      "the deploy to end with its call held",
    );
    cli.proc.kill("SIGINT");
    expect(await cli.exited).toBe(0);
    const json = logFiles(dir).find((name) => name.endsWith(".json"))!;
    expect(readJson(join(dir, ".service", "logs", json)).outbound).toMatchObject([
      { kind: "notify", ok: false, detail: expect.stringMatching(/^not sent/) },
    ]);
    api.release();
    // Without the signal the CLI would wait its whole grace (40 s): this test's limit is below it.
  }, 20_000);

  test("cancelled: a deploy cancelled in the queue by a shutdown notifies, and gets no status (it pulled nothing)", async () => {
    const api = fakeApi([201]);
    const repo = makeRepo();
    const gate = makeGate();
    const yaml = `runScript: ${gate.script}\nsecret: ${SECRET}\nnotify:\n  - url: ${api.url}/hook\n    on: [cancelled, succeeded]\nstatus: { provider: github, repo: acme/web, apiUrl: "${api.url}", token: forge-token-123456 }\n`;
    writeFileSync(join(repo.clone, "service.yaml"), yaml);
    await using server = await startServer(repo.clone, gate.env);
    const running = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    const queued = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => queued.text.includes("[queued]"), "the second to queue");
    server.proc.kill("SIGTERM");
    await queued.done;
    gate.open();
    await running.done;
    expect(await server.proc.exited).toBe(0);
    const hooks = api.seen.filter((s) => s.path === "/hook").map((s) => s.json());
    expect(hooks.map((p) => [p.outcome, p.ok]).sort()).toEqual([
      ["cancelled", false],
      ["succeeded", true],
    ]);
    // The running deploy's pending and success; nothing for the cancelled one.
    expect(api.seen.filter((s) => s.path.startsWith("/repos/")).map((s) => s.json().state)).toEqual([
      "pending",
      "success",
    ]);
  });

  test("on shutdown, a call still in flight gets a short grace, then is recorded as not sent", async () => {
    const api = fakeApi(["hang"]);
    const dir = serviceDir(`runScript: "true"\nnotify:\n  - url: ${api.url}\n    on: [succeeded]\n`);
    await using server = await startServer(dir);
    const response = await post(`${server.url}/?format=json`, { secret: SECRET });
    const { log } = (await response.json()) as { log: { json: string; log: string } };
    await waitFor(() => api.held() === 1, "the held call");
    expect(await server.stop()).toBe(0);
    expect(readJson(join(dir, log.json)).outbound).toMatchObject([
      { kind: "notify", ok: false, detail: expect.stringMatching(/^not sent/) },
    ]);
    expect(readFileSync(join(dir, log.log), "utf8")).toContain(
      "[notify] json: succeeded not sent: the service stopped",
    );
    api.release();
  });
});

describe("the status and notify keys", () => {
  function load(yaml: string) {
    const cwd = tempDir();
    writeFileSync(join(cwd, "service.yaml"), yaml);
    const warnings: string[] = [];
    const logger = { warn: (m: string) => warnings.push(m) } as never;
    try {
      return { config: loadConfig({ cwd, env: {}, logger }), warnings, cwd };
    } catch (error) {
      return { error: error as Error, warnings, cwd };
    }
  }

  test("per apps entry: an app's own status and notify, else the top level's", () => {
    const { config, cwd } = load(
      [
        "status: { provider: github, token_file: /run/token }",
        "notify:",
        "  - { url: 'https://hooks.example.com/top', on: 'failed, started' }",
        "apps:",
        "  - { name: web, host: web.example.com, path: /, repoPath: /srv/web, runScript: 'true', status: { provider: gitlab, repo: 42 } }",
        "  - { name: api, host: api.example.com, path: /, repoPath: /srv/api, runScript: 'true', notify: [{ url: 'https://ntfy.sh/api', format: ntfy }] }",
      ].join("\n"),
    );
    const [web, api] = resolveApps(config!, cwd);
    expect(web!.status).toEqual({ provider: "gitlab", repo: "42" });
    expect(web!.notify).toEqual([{ url: "https://hooks.example.com/top", on: ["failed", "started"] }]);
    expect(api!.status).toEqual({ provider: "github", tokenFile: "/run/token" });
    expect(api!.notify).toEqual([{ url: "https://ntfy.sh/api", format: "ntfy" }]);
  });

  test.each([
    ["status: github", 'key "status": expected a mapping'],
    ["status: { provider: sourcehut }", "provider: expected one of github, gitlab, gitea, bitbucket"],
    ["status: { provider: github, tokn: x }", 'unknown key "tokn"'],
    ["status: { apiUrl: 'ftp://x' }", "apiUrl: expected an http(s) URL"],
    ["notify: [{ url: 'https://x.example.com', on: [failed, exploded] }]", 'on: unknown event "exploded"'],
    ["notify: [{ url: 'https://x.example.com', format: irc }]", "format: expected one of json, slack, discord, ntfy"],
    ["notify: [{ format: slack }]", "entry 1: url is required"],
    ["notify: [{ url: 'https://x.example.com', timeoutMs: 0 }]", "timeoutMs: expected a positive integer"],
  ])("%s is refused, naming the key", (yaml, message) => {
    const { error } = load(yaml);
    expect(error?.message).toContain(message);
    expect(error?.message).toContain(': key "');
  });

  test("a wrong value never shows the token", () => {
    const { error } = load("status: { token: [forge-token-abcdef] }");
    expect(error?.message).toContain("token: expected a non-empty string");
    expect(error?.message).not.toContain("forge-token-abcdef");
  });
});

describe("service.yaml.example", () => {
  test("its commented status and notify examples, uncommented, load with every key", () => {
    const example = readFileSync(join(import.meta.dir, "..", "..", "service.yaml.example"), "utf8");
    const block = (key: string) => {
      const lines = example.split("\n");
      const start = lines.indexOf(`# ${key}:`);
      const end = lines.findIndex((line, index) => index > start && line.trim() === "");
      return lines
        .slice(start, end)
        .map((line) => line.replace(/^# ?/, ""))
        .join("\n");
    };
    const cwd = tempDir();
    writeFileSync(join(cwd, "service.yaml"), `${block("status")}\n${block("notify")}\n`);
    const warnings: string[] = [];
    const config = loadConfig({ cwd, env: {}, logger: { warn: (m: string) => warnings.push(m) } as never });
    expect(warnings).toEqual([]);
    expect(Object.keys(config.status!).sort()).toEqual([
      "context",
      "deployments",
      "environment",
      "provider",
      "repo",
      "targetUrl",
      "timeoutMs",
      "tokenFile",
    ]);
    expect(new Set(config.notify!.flatMap((target) => Object.keys(target)))).toEqual(
      new Set(["url", "format", "on", "headers", "timeoutMs"]),
    );
  });
});
