import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import { runDeploy } from "../../src/deploy/pipeline.ts";
import { OutboundCalls } from "../../src/notify/outbound.ts";
import { outboundSinks } from "../../src/notify/sink.ts";
import { parseRemote, statusTarget } from "../../src/config/forge.ts";
import type { StatusSettings } from "../../src/config/schema-notify.ts";
import { baseEnv, git, makeLocalRepo, makeRepo, readJson, tempDir } from "../_support/helpers.ts";
import { fakeApi } from "../_support/outbound-fixtures.ts";
import { outcomes } from "../_support/outbound-outcomes.ts";

const TOKEN = "forge-token-abcdef123456";

/** The outbound calls of the deploys below, as a server tracks its own. */
const calls = new OutboundCalls();

async function deploy(
  repoPath: string,
  status: StatusSettings,
  options: { runScript?: string; rollbackOnFailure?: boolean; app?: string; env?: Record<string, string> } = {},
) {
  const cwd = tempDir();
  const config = {
    ...defaultConfig(cwd),
    repoPath,
    runScript: options.runScript ?? "echo deployed",
    rollbackOnFailure: options.rollbackOnFailure ?? false,
    status,
  };
  const result = await runDeploy({
    id: crypto.randomUUID(),
    outbound: outboundSinks(calls),
    config,
    trigger: "cli",
    cwd,
    app: options.app,
    env: baseEnv(options.env),
  });
  return { cwd, result };
}

const PROVIDERS: {
  provider: StatusSettings["provider"];
  api: (url: string) => string;
  path: (sha: string) => string;
  auth: [string, string];
  states: [string, string];
  body: (seen: any) => Record<string, unknown>;
}[] = [
  {
    provider: "github",
    api: (url) => url,
    path: (sha) => `/repos/acme/web/statuses/${sha}`,
    auth: ["authorization", `Bearer ${TOKEN}`],
    states: ["pending", "success"],
    body: (b) => ({ state: b.state, context: b.context, hasDescription: typeof b.description === "string" }),
  },
  {
    provider: "gitlab",
    api: (url) => `${url}/api/v4`,
    path: (sha) => `/api/v4/projects/acme%2Fweb/statuses/${sha}`,
    auth: ["private-token", TOKEN],
    states: ["running", "success"],
    body: (b) => ({ state: b.state, context: b.name, hasDescription: typeof b.description === "string" }),
  },
  {
    provider: "gitea",
    api: (url) => `${url}/api/v1`,
    path: (sha) => `/api/v1/repos/acme/web/statuses/${sha}`,
    auth: ["authorization", `token ${TOKEN}`],
    states: ["pending", "success"],
    body: (b) => ({ state: b.state, context: b.context, hasDescription: typeof b.description === "string" }),
  },
  {
    provider: "bitbucket",
    api: (url) => `${url}/2.0`,
    path: (sha) => `/2.0/repositories/acme/web/commit/${sha}/statuses/build`,
    auth: ["authorization", `Bearer ${TOKEN}`],
    states: ["INPROGRESS", "SUCCESSFUL"],
    body: (b) => ({
      state: b.state,
      context: b.key === b.name ? b.key : "key and name differ",
      hasDescription: typeof b.description === "string" && typeof b.url === "string",
    }),
  },
];

describe("commit statuses", () => {
  for (const forge of PROVIDERS) {
    test(`${forge.provider}: pending on the pulled commit when the deploy starts, success when it ends ok, as its API documents`, async () => {
      const api = fakeApi([201]);
      const repo = makeRepo();
      const sha = repo.push({ "app.txt": "v2\n" });
      const { result } = await deploy(repo.clone, {
        provider: forge.provider,
        repo: "acme/web",
        apiUrl: forge.api(api.url),
        token: TOKEN,
      });
      expect(result.ok).toBe(true);
      const list = await outcomes(result.log.json, 2);
      expect(api.seen.map((s) => [s.method, s.path, s.headers[forge.auth[0]], s.headers["content-type"]])).toEqual([
        ["POST", forge.path(sha), forge.auth[1], "application/json"],
        ["POST", forge.path(sha), forge.auth[1], "application/json"],
      ]);
      expect(api.seen.map((s) => forge.body(s.json()))).toEqual(
        forge.states.map((state) => ({ state, context: "deploy", hasDescription: true })),
      );
      expect(list.map((o) => [o.kind, o.target, o.ok])).toEqual([
        ["status", forge.provider, true],
        ["status", forge.provider, true],
      ]);
      const log = readFileSync(result.log.log, "utf8");
      expect(log).toContain(`[status] ${forge.provider}: pending posted`);
      expect(log).toContain(`[status] ${forge.provider}: success posted`);
      expect(log).not.toContain(TOKEN);
    });
  }

  test("failure when the deploy fails; the description says why in under 140 characters", async () => {
    const api = fakeApi([201]);
    const repo = makeRepo();
    const { result } = await deploy(
      repo.clone,
      { provider: "github", repo: "acme/web", apiUrl: api.url, token: TOKEN },
      { runScript: `sh -c "exit 3"` },
    );
    expect(result.ok).toBe(false);
    await outcomes(result.log.json, 2);
    const final = api.seen[1]!.json();
    expect(final.state).toBe("failure");
    expect(final.description).toContain("exit code 3");
    expect(final.description.length).toBeLessThan(140);
  });

  test("a long error is cut: the description stays under 140 characters", async () => {
    const api = fakeApi([201]);
    const repo = makeRepo();
    const { result } = await deploy(
      repo.clone,
      { provider: "github", repo: "acme/web", apiUrl: api.url, token: TOKEN },
      { runScript: `no-such-command-${"x".repeat(300)}` },
    );
    expect(result.ok).toBe(false);
    await outcomes(result.log.json, 2);
    expect(api.seen[1]!.json().description.length).toBeLessThan(140);
  });

  test("a rolled-back deploy marks the pulled commit failed and says rolled back to the previous commit", async () => {
    const api = fakeApi([201]);
    const repo = makeRepo({ "deploy.sh": "exit 0\n" });
    const before = repo.head();
    const sha = repo.push({ "deploy.sh": "exit 1\n" });
    const { result } = await deploy(
      repo.clone,
      { provider: "gitea", repo: "acme/web", apiUrl: api.url, token: TOKEN },
      { runScript: "sh deploy.sh", rollbackOnFailure: true },
    );
    expect(result.rollback?.ok).toBe(true);
    await outcomes(result.log.json, 2);
    expect(api.seen.map((s) => s.path)).toEqual([`/repos/acme/web/statuses/${sha}`, `/repos/acme/web/statuses/${sha}`]);
    const final = api.seen[1]!.json();
    expect(final.state).toBe("failure");
    expect(final.description).toContain(`rolled back to ${before.slice(0, 7)}`);
  });

  test("github deployments: true also creates a Deployment on the pulled commit and sets in_progress, then the outcome", async () => {
    const api = fakeApi([201]);
    const repo = makeRepo();
    const sha = repo.push({ "v.txt": "2\n" });
    const targetUrl = "https://deploy.example.com/{id}";
    const { result } = await deploy(
      repo.clone,
      { provider: "github", repo: "acme/web", apiUrl: api.url, token: TOKEN, deployments: true, targetUrl },
      { runScript: "false" },
    );
    await outcomes(result.log.json, 5);
    expect(api.seen.map((s) => [s.path, s.headers.authorization])).toEqual([
      [`/repos/acme/web/statuses/${sha}`, `Bearer ${TOKEN}`],
      ["/repos/acme/web/deployments", `Bearer ${TOKEN}`],
      ["/repos/acme/web/deployments/1/statuses", `Bearer ${TOKEN}`],
      [`/repos/acme/web/statuses/${sha}`, `Bearer ${TOKEN}`],
      ["/repos/acme/web/deployments/1/statuses", `Bearer ${TOKEN}`],
    ]);
    expect(api.seen[1]!.json()).toMatchObject({
      ref: sha,
      environment: "production",
      auto_merge: false,
      required_contexts: [],
    });
    expect([api.seen[2]!.json(), api.seen[4]!.json()]).toMatchObject([
      { state: "in_progress", environment: "production", log_url: `https://deploy.example.com/${result.id}` },
      { state: "failure", environment: "production" },
    ]);
    expect(readFileSync(result.log.log, "utf8")).toContain("[status] github: deployment in_progress posted");
  });

  test("a 401 from the forge is tried once, logged with the token redacted, and the deploy is untouched", async () => {
    const api = fakeApi([401]);
    api.errorBody = `{"message":"Bad credentials for ${TOKEN}"}`;
    const repo = makeLocalRepo();
    const { result } = await deploy(repo, { provider: "gitlab", repo: "acme/web", apiUrl: api.url, token: TOKEN });
    expect(result.ok).toBe(true);
    const list = await outcomes(result.log.json, 2);
    expect(api.seen).toHaveLength(2);
    expect(list.map((o) => [o.what, o.ok])).toEqual([
      ["pending", false],
      ["success", false],
    ]);
    const log = readFileSync(result.log.log, "utf8");
    expect(log).toContain('[status] gitlab failed: 401 Unauthorized: {"message":"Bad credentials for ***"} (pending)');
    for (const text of [log, readFileSync(result.log.json, "utf8")]) expect(text).not.toContain(TOKEN);
  });

  test("no status before the pull: a deploy whose pull fails posts none", async () => {
    const api = fakeApi([201]);
    const repo = makeRepo();
    git(repo.clone, "remote", "set-url", "origin", join(repo.dir, "gone.git"));
    const { result } = await deploy(repo.clone, {
      provider: "github",
      repo: "acme/web",
      apiUrl: api.url,
      token: TOKEN,
    });
    expect(result.pull.success).toBe(false);
    // Every outbound call the deploy led to has ended (or never started).
    await calls.settle(30_000);
    expect(api.seen).toEqual([]);
    expect(readJson(result.log.json).outbound).toBeUndefined();
  });

  test("the context is deploy/<app> in multi-app mode, and targetUrl fills {id}, {app} and {commit}", async () => {
    const api = fakeApi([201]);
    const repo = makeRepo();
    const sha = repo.head();
    const targetUrl = "https://deploy.example.com/d/{app}/{id}?c={commit}";
    const { result } = await deploy(
      repo.clone,
      { provider: "github", repo: "acme/web", apiUrl: api.url, token: TOKEN, targetUrl },
      { app: "web" },
    );
    await outcomes(result.log.json, 2);
    const body = api.seen[0]!.json();
    expect(body.context).toBe("deploy/web");
    expect(body.target_url).toBe(`https://deploy.example.com/d/web/${result.id}?c=${sha}`);
  });

  test("the token comes from tokenFile, else from SERVICE_STATUS_TOKEN", async () => {
    const api = fakeApi([201]);
    const repo = makeLocalRepo();
    const { result } = await deploy(
      repo,
      { provider: "github", repo: "acme/web", apiUrl: api.url },
      { env: { SERVICE_STATUS_TOKEN: TOKEN } },
    );
    await outcomes(result.log.json, 2);
    expect(api.seen[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);

    const dir = tempDir();
    writeFileSync(join(dir, "token"), `${TOKEN}-file\n`);
    const second = await deploy(
      repo,
      { provider: "github", repo: "acme/web", apiUrl: api.url, tokenFile: join(dir, "token") },
      { env: { SERVICE_STATUS_TOKEN: TOKEN } },
    );
    await outcomes(second.result.log.json, 2);
    expect(api.seen[2]!.headers.authorization).toBe(`Bearer ${TOKEN}-file`);
  });

  test("the run script does not get the status token in its environment", async () => {
    const api = fakeApi([201]);
    const repo = makeLocalRepo();
    const { result } = await deploy(
      repo,
      { provider: "github", repo: "acme/web", apiUrl: api.url },
      { env: { SERVICE_STATUS_TOKEN: TOKEN }, runScript: `sh -c 'echo "token=[$SERVICE_STATUS_TOKEN]"'` },
    );
    expect(result.run.stdout).toContain("token=[]");
  });

  test("a provider that cannot be inferred is said in the log, and nothing is sent", async () => {
    const repo = makeRepo();
    const { result } = await deploy(repo.clone, { token: TOKEN });
    const list = await outcomes(result.log.json, 1);
    await calls.settle(30_000);
    expect(readJson(result.log.json).outbound).toHaveLength(1);
    expect(list[0].ok).toBe(false);
    expect(list[0].detail).toContain("set provider");
    expect(readFileSync(result.log.log, "utf8")).toContain(
      "[status] forge failed: set provider (github, gitlab, gitea, bitbucket)",
    );
  });
});

describe("forge and repository from the origin URL", () => {
  test.each([
    ["https://github.com/acme/web.git", { host: "github.com", repo: "acme/web" }],
    ["git@github.com:acme/web.git", { host: "github.com", repo: "acme/web" }],
    ["ssh://git@gitlab.com:22/group/sub/web.git", { host: "gitlab.com", repo: "group/sub/web" }],
    ["https://user:secret@bitbucket.org/team/web", { host: "bitbucket.org", repo: "team/web" }],
    ["https://codeberg.org/acme/web/", { host: "codeberg.org", repo: "acme/web" }],
    ["/srv/git/web.git", undefined],
    ["file:///srv/git/web.git", undefined],
    ["https://github.com/", undefined],
  ])("%s", (url, expected) => {
    expect(parseRemote(url)).toEqual(expected);
  });

  test("a known public host gives the provider and its API; a self-hosted one needs provider and apiUrl", () => {
    const env = { SERVICE_STATUS_TOKEN: TOKEN };
    expect(statusTarget({}, "git@gitlab.com:group/web.git", undefined, "/", env)).toMatchObject({
      provider: "gitlab",
      apiUrl: "https://gitlab.com/api/v4",
      repo: "group/web",
      context: "deploy",
    });
    expect(statusTarget({}, "https://bitbucket.org/team/web.git", "api", "/", env)).toMatchObject({
      provider: "bitbucket",
      apiUrl: "https://api.bitbucket.org/2.0",
      context: "deploy/api",
    });
    expect(statusTarget({}, "https://git.example.com/acme/web.git", undefined, "/", env)).toEqual({
      problem: expect.stringContaining("set provider"),
    });
    expect(statusTarget({ provider: "gitea" }, "https://git.example.com/acme/web.git", undefined, "/", env)).toEqual({
      problem: expect.stringContaining("set apiUrl"),
    });
    expect(statusTarget({ provider: "github" }, "https://github.com/acme/web.git", undefined, "/", {})).toEqual({
      problem: expect.stringContaining("no token"),
    });
    // No origin to tell: the provider's public API (Gitea has none).
    expect(statusTarget({ provider: "github", repo: "acme/web" }, undefined, undefined, "/", env)).toMatchObject({
      apiUrl: "https://api.github.com",
    });
    expect(statusTarget({ provider: "gitea", repo: "acme/web" }, undefined, undefined, "/", env)).toEqual({
      problem: expect.stringContaining("set apiUrl"),
    });
  });
});
