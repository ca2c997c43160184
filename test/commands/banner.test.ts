/**
 * The start banner (docs/cli.md "The banner"): the spec's lines (`listening on http://localhost:<port>`, the repository,
 * the run command, `Auth: required`), and around them what an operator checks first: where the run script
 * comes from, the branch, events and polling when set, and the address bound when it is not loopback.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, SECRET, startServer, tempDir } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";

const lines = (stdout: string) => stdout.split("\n");

describe('the start banner (docs/cli.md "The banner")', () => {
  test("the repository's own config file: the script's source, branch, events, polling and every interface bound", async () => {
    const repo = makeRepo();
    const file = join(repo.clone, "service.yaml");
    writeFileSync(file, "runScript: echo hi\nbranch: main\nevents: [push]\npollIntervalMs: 60000\n");
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
    const banner = lines(server.stdout.text);
    expect(banner[0]).toBe(`listening on http://localhost:${server.port}`);
    expect(banner).toContain("bound to 0.0.0.0: every interface");
    expect(banner).toContain(`repo: ${repo.clone}`);
    expect(banner).toContain("run: echo hi");
    expect(banner).toContain(`run from: ${file}, the repository's own: read again after each pull`);
    expect(banner).toContain("branch: main (pushes to other branches are skipped)");
    expect(banner).toContain("events: push (other events are skipped)");
    expect(banner).toContain("polling: every 60 s (the remote's main is asked for new commits)");
    expect(banner).toContain("Auth: required");
  });

  test("the default script in a service directory apart from the repository, on loopback: a repository's service.yaml replaces it", async () => {
    const repo = makeRepo();
    const cwd = tempDir("service-home-");
    await using server = await startServer(cwd, {
      SERVICE_SECRET: SECRET,
      SERVICE_REPO_PATH: repo.clone,
      SERVICE_HOSTNAME: "127.0.0.1",
    });
    const banner = lines(server.stdout.text);
    expect(banner).toContain("run: npm run deploy");
    expect(banner).toContain(
      "run from: the default; after each pull, a service.yaml (or service.yml, .service.yaml, .service.yml) in the repository replaces it when present",
    );
    expect(banner.filter((line) => /^(branch|events|polling|gate|status context):/.test(line))).toEqual([]);
    expect(banner[1]).toBe("bound to 127.0.0.1 (loopback: this machine only)");
  });

  test("SERVICE_RUN_SCRIPT wins over every config file; SERVICE_CONFIG outside the repository is never replaced", async () => {
    const repo = makeRepo();
    const fromEnv = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo env" });
    expect(lines(fromEnv.stdout.text)).toContain(
      "run from: SERVICE_RUN_SCRIPT; it wins over every config file, the repository's too",
    );
    await fromEnv.stop();

    const cwd = tempDir("service-home-");
    const outside = join(cwd, "deploy.yaml");
    writeFileSync(outside, `repoPath: ${repo.clone}\nrunScript: echo outside\n`);
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET, SERVICE_CONFIG: outside });
    expect(lines(server.stdout.text)).toContain(
      `run from: ${outside}; SERVICE_CONFIG points outside the repository, so a pull does not change it`,
    );
  });

  test("multi-app: each app's block says where its script comes from and its branch", async () => {
    const repo = makeRepo();
    const cwd = tempDir("service-apps-");
    const file = writeServiceYaml(cwd, {
      hostname: "::1",
      apps: [
        {
          name: "web",
          host: "web.example.com",
          path: "/hook",
          repoPath: repo.clone,
          runScript: "echo web",
          branch: "main",
          secret: SECRET,
        },
      ],
    });
    await using server = await startServer(cwd);
    const banner = lines(server.stdout.text);
    expect(banner).toContain("app web: run: echo web");
    expect(banner).toContain(
      `app web: run from: its apps entry in ${file}; after each pull, a service.yaml (or service.yml, .service.yaml, .service.yml) in the repository (its apps entry "web", or its top-level keys) replaces it when present`,
    );
    expect(banner).toContain("app web: branch: main (pushes to other branches are skipped)");
    expect(banner[1]).toBe("bound to [::1] (loopback: this machine only)");
  });

  test("each app's gate and the context its status is reported under", async () => {
    const [web, api] = [makeRepo(), makeRepo()];
    const cwd = tempDir("service-apps-");
    const status = { provider: "github", repo: "o/r", token: "t0k3n-abcdefghijklmnop" };
    writeServiceYaml(cwd, {
      hostname: "127.0.0.1",
      apps: [
        {
          name: "web",
          host: "web.example.com",
          path: "/hook",
          repoPath: web.clone,
          runScript: "echo web",
          secret: SECRET,
          status,
          gate: { checks: ["build", { name: "lint", by: "ci-bot" }], waitMs: 60000 },
        },
        {
          name: "api",
          host: "api.example.com",
          path: "/hook",
          repoPath: api.clone,
          runScript: "echo api",
          secret: SECRET,
          status: { ...status, context: "ci/api" },
        },
      ],
    });
    await using server = await startServer(cwd);
    const banner = lines(server.stdout.text);
    expect(banner[0]).toBe(`listening on http://localhost:${server.port}`);
    expect(banner).toContain("app web: gate: build, lint (by ci-bot) success (wait up to 60 s)");
    expect(banner).toContain("app web: status context: deploy/web");
    expect(banner).toContain("app api: status context: ci/api");
    expect(banner.some((line) => line.startsWith("app api: gate:"))).toBe(false);
  });
});
