import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { adminUrl } from "../_support/admin-helpers.ts";
import { forcePush } from "../_support/force-push.ts";
import { git, makeRepo, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";
import { deployRecords, postAs, writeServiceYaml } from "../_support/webhook-fixtures.ts";
import { hookJson, MONOREPO, pushRevert, serviceDir } from "./_fixtures.ts";

const short = (sha: string) => sha.slice(0, 12);

/** A single app with `paths` deploying `repo`, its service directory apart from the clone. */
async function pathsServer(clone: string, paths: string, env: Record<string, string> = {}) {
  const cwd = serviceDir();
  const server = await startServer(cwd, {
    SERVICE_SECRET: SECRET,
    SERVICE_HOSTNAME: "127.0.0.1",
    SERVICE_REPO_PATH: clone,
    SERVICE_RUN_SCRIPT: "echo deployed",
    SERVICE_PATHS: paths,
    ...env,
  });
  return Object.assign(server, { cwd });
}

describe("paths: one repository, several apps", () => {
  test("two apps of one monorepo each deploy only the pushes that touch their paths, skips counted and shown", async () => {
    const repo = makeRepo(MONOREPO);
    const apiClone = join(repo.dir, "api");
    git(repo.dir, "clone", "--quiet", repo.remote, apiClone);
    const cwd = serviceDir();
    writeServiceYaml(cwd, {
      hostname: "127.0.0.1",
      apps: [
        {
          name: "web",
          host: "web.test",
          path: "/hook",
          repoPath: repo.clone,
          runScript: "echo web",
          secret: SECRET,
          paths: ["apps/web/**", "packages/ui/**"],
        },
        {
          name: "api",
          host: "api.test",
          path: "/hook",
          repoPath: apiClone,
          runScript: "echo api",
          secret: SECRET,
          paths: ["apps/api/**", "packages/ui/**"],
        },
      ],
    });
    await using server = await startServer(cwd, {
      SERVICE_ADMIN_PORT: "0",
      SERVICE_ADMIN_TOKEN: "admin-token-0123456789abcdef",
    });
    const hook = async (app: string, json = true) => {
      const response = await postAs(server.url, `${app}.test`, `/hook${json ? "?format=json" : ""}`, {
        secret: SECRET,
      });
      expect(response.status).toBe(200);
      return json ? response.json() : response.text();
    };
    // No deploy on record: each app's first push deploys.
    const initial = repo.head();
    expect((await hook("web")).ok).toBe(true);
    expect((await hook("api")).ok).toBe(true);
    const firstApi = deployRecords(cwd).find((r) => r.app === "api");

    const web = repo.push({ "apps/web/index.ts": "web 2\n" });
    expect((await hook("web")).ok).toBe(true);
    const skipped = `no change under apps/api/**, packages/ui/** since ${short(initial)} (deploy ${firstApi.id.slice(0, 8)})`;
    expect(await hook("api")).toMatchObject({ skipped: true, reason: skipped });
    expect(git(apiClone, "rev-parse", "HEAD")).toBe(initial);
    expect(deployRecords(cwd).at(-1)).toMatchObject({ app: "web", paths: { matched: ["apps/web/index.ts"] } });
    expect(repo.head()).toBe(web);

    repo.push({ "apps/api/index.ts": "api 2\n" });
    expect(await hook("web", false)).toMatch(
      /^\[skipped\] no change under apps\/web\/\*\*, packages\/ui\/\*\* since [0-9a-f]{12} \(deploy [0-9a-f]{8}\)\n$/,
    );
    expect((await hook("api")).ok).toBe(true);

    const both = repo.push({ "packages/ui/button.ts": "ui 2\n" });
    expect((await hook("web")).ok).toBe(true);
    expect((await hook("api")).ok).toBe(true);
    expect(repo.head()).toBe(both);
    expect(git(apiClone, "rev-parse", "HEAD")).toBe(both);
    const last = deployRecords(cwd).slice(-2);
    expect(last.map((r) => r.paths)).toEqual([
      { matched: ["packages/ui/button.ts"] },
      { matched: ["packages/ui/button.ts"] },
    ]);

    const metrics = await (await fetch(`${adminUrl(server)}/metrics`)).text();
    expect(metrics).toContain('service_skipped_pushes_total{app="api",reason="paths"} 1');
    expect(metrics).toContain('service_skipped_pushes_total{app="web",reason="paths"} 1');
    const status = await runCli(["status", "--json"], { cwd });
    const apps = JSON.parse(status.stdout);
    expect(apps.find((a: any) => a.app === "web").lastSkipped).toMatchObject({
      reason: "paths",
      text: expect.stringContaining("apps/web/**"),
    });
    expect(apps.find((a: any) => a.app === "api").lastSkipped).toMatchObject({ reason: "paths", text: skipped });
    const text = await runCli(["status", "--app", "api"], { cwd });
    expect(text.stdout).toContain(`last skipped push: `);
    expect(text.stdout).toContain(skipped);
  });
});

describe("paths: the change since the live commit", () => {
  test("a revert of a change never deployed leaves nothing changed since the live commit: skipped, and the fetch moves nothing", async () => {
    const repo = makeRepo(MONOREPO);
    await using server = await pathsServer(repo.clone, "apps/web/**");
    expect((await hookJson(server.url)).ok).toBe(true);
    const live = repo.head();
    // The change and its revert: the deliveries' commits touch apps/web, the tree at the tip does not differ.
    repo.push({ "apps/web/index.ts": "web 2\n" }, "web 2");
    const tip = pushRevert(repo);
    const answer = await hookJson(server.url);
    expect(answer).toMatchObject({
      skipped: true,
      reason: expect.stringContaining(`no change under apps/web/** since ${short(live)}`),
    });
    // Nothing live changed: HEAD, the working tree, the remote-tracking branch; the tip is in the private ref only.
    expect(repo.head()).toBe(live);
    expect(git(repo.clone, "status", "--porcelain")).toBe("");
    expect(readFileSync(join(repo.clone, "apps/web/index.ts"), "utf8")).toBe("web 1\n");
    expect(git(repo.clone, "rev-parse", "refs/remotes/origin/main")).toBe(live);
    expect(git(repo.clone, "rev-parse", "refs/service/tips/main")).toBe(tip);
    expect(deployRecords(server.cwd)).toHaveLength(1);
  });

  test("a force-push is judged from the live commit to the new tip", async () => {
    const repo = makeRepo(MONOREPO);
    // pull: reset follows the rewritten branch (a plain git pull refuses a force-push: steps/diverged.ts).
    await using server = await pathsServer(repo.clone, "apps/web/**", { SERVICE_PULL: "reset" });
    expect((await hookJson(server.url)).ok).toBe(true);
    const live = repo.push({ "apps/web/index.ts": "web 2\n" });
    expect((await hookJson(server.url)).ok).toBe(true);
    expect(repo.head()).toBe(live);
    // Rewritten on top of the live commit, touching only the README: nothing under apps/web changed.
    repo.push({ "apps/web/index.ts": "web 3\n" });
    forcePush(repo, { "README.md": "readme 2\n" });
    expect(await hookJson(server.url)).toMatchObject({ skipped: true });
    // Rewritten below the live commit: its apps/web change is gone from the tip, which differs from live there.
    const below = forcePush(repo, { "README.md": "readme 3\n" }, "HEAD~2");
    const deployed = await hookJson(server.url);
    expect(deployed.ok).toBe(true);
    expect(repo.head()).toBe(below);
    expect(deployRecords(server.cwd).at(-1).paths).toEqual({ matched: ["apps/web/index.ts"] });
  }, 60_000);

  test("a missed delivery's files count: two pushes, only the second delivered, deploy for the first's change", async () => {
    const repo = makeRepo(MONOREPO);
    await using server = await pathsServer(repo.clone, "apps/web/**,packages/ui/**");
    expect((await hookJson(server.url)).ok).toBe(true);
    repo.push({ "apps/web/index.ts": "web 2\n" }, "missed");
    const second = repo.push({ "README.md": "readme 2\n" }, "delivered");
    expect((await hookJson(server.url)).ok).toBe(true);
    expect(repo.head()).toBe(second);
    expect(deployRecords(server.cwd).at(-1).paths).toEqual({ matched: ["apps/web/index.ts"] });
  });

  test("service deploy deploys whatever the paths say, and its record says paths: forced", async () => {
    const repo = makeRepo(MONOREPO);
    await using server = await pathsServer(repo.clone, "apps/web/**");
    expect((await hookJson(server.url)).ok).toBe(true);
    const tip = repo.push({ "README.md": "readme 2\n" });
    expect(await hookJson(server.url)).toMatchObject({ skipped: true });
    const env = { SERVICE_REPO_PATH: repo.clone, SERVICE_RUN_SCRIPT: "echo deployed", SERVICE_PATHS: "apps/web/**" };
    const deployed = await runCli(["deploy"], { cwd: server.cwd, env });
    expect(deployed.code).toBe(0);
    expect(repo.head()).toBe(tip);
    expect(deployRecords(server.cwd).at(-1).paths).toEqual({ forced: true });
  });

  test("paths and skipMarkers in the repository's own config file change nothing", async () => {
    const repo = makeRepo({ ...MONOREPO, "service.yaml": "paths: [nothing/**]\nskipMarkers: true\n" });
    const cwd = serviceDir();
    await using server = await startServer(cwd, {
      SERVICE_SECRET: SECRET,
      SERVICE_HOSTNAME: "127.0.0.1",
      SERVICE_REPO_PATH: repo.clone,
      SERVICE_RUN_SCRIPT: "echo deployed",
    });
    expect((await hookJson(server.url)).ok).toBe(true);
    const tip = repo.push({ "README.md": "readme 2\n" }, "docs [skip deploy]");
    expect((await hookJson(server.url)).ok).toBe(true);
    expect(repo.head()).toBe(tip);
    expect(git(repo.clone, "for-each-ref", "refs/service")).toBe("");
  });
});

describe("paths: the admin API", () => {
  test("the admin API deploys whatever the paths say (paths: forced), and GET /api/apps shows the last skipped push", async () => {
    const repo = makeRepo(MONOREPO);
    await using server = await pathsServer(repo.clone, "apps/web/**", {
      SERVICE_ADMIN_PORT: "0",
      SERVICE_ADMIN_TOKEN: "admin-token-0123456789abcdef",
    });
    const auth = { authorization: "Bearer admin-token-0123456789abcdef" };
    expect((await hookJson(server.url)).ok).toBe(true);
    const tip = repo.push({ "README.md": "readme 2\n" });
    const skipped = await hookJson(server.url);
    expect(skipped).toMatchObject({ skipped: true });
    const admin = adminUrl(server);
    const apps = (await (await fetch(`${admin}/api/apps`, { headers: auth })).json()).apps;
    expect(apps[0].lastSkipped).toMatchObject({ reason: "paths", text: skipped.reason });
    const asked = await fetch(`${admin}/api/apps/default/deploy`, { method: "POST", headers: auth });
    expect(asked.status).toBeLessThan(300);
    await waitFor(() => repo.head() === tip && deployRecords(server.cwd).at(-1)?.status === "done", "the API's deploy");
    expect(deployRecords(server.cwd).at(-1)).toMatchObject({
      trigger: "api",
      paths: { forced: true },
      result: { ok: true },
    });
  });
});
