/**
 * `service check` (docs/cli.md "CLI"): loads the configuration as the server would, prints every value with where it
 * came from (default, file, env) and secrets masked, and exits 1 with every problem listed. The server says
 * the same problems when it starts.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeLocalRepo, makeRepo, runCli, startServer, tempDir } from "../_support/helpers.ts";

const check = (cwd: string, env: Record<string, string> = {}) => runCli(["check"], { cwd, env });

/** The value lines of the report: key → { value, source }. */
function values(stdout: string): Record<string, { value: string; source: string }> {
  const out: Record<string, { value: string; source: string }> = {};
  for (const line of stdout.split("\n")) {
    const match = /^ {2}(\w+)\s+(.*?)\s+\[([a-z ]+)\]$/.exec(line);
    if (match) out[match[1]!] = { value: match[2]!, source: match[3]! };
  }
  return out;
}

/** The problem lines of the report (`  - …`). */
function problems(stdout: string): string[] {
  return stdout
    .split("\n")
    .filter((line) => line.startsWith("  - "))
    .map((line) => line.slice(4));
}

describe("service check: a good configuration", () => {
  test("exits 0 and prints every value with its source (default, file, env); the secret is masked", async () => {
    const repo = makeRepo();
    const fileSecret = "file-secret-value-98765";
    writeFileSync(
      join(repo.clone, "service.yaml"),
      ["port: 4321", "run_script: echo from-file", "rollbackOnFailure: true", `secret: ${fileSecret}`, ""].join("\n"),
    );
    const result = await check(repo.clone, { SERVICE_RUN_TIMEOUT_MS: "5000", SERVICE_PATH: "/hook" });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`config file: ${join(repo.clone, "service.yaml")}`);
    expect(result.stdout).toContain("no problems found");
    const v = values(result.stdout);
    expect(v.port).toEqual({ value: "4321", source: "file" });
    expect(v.runScript).toEqual({ value: "echo from-file", source: "file" });
    expect(v.rollbackOnFailure).toEqual({ value: "true", source: "file" });
    expect(v.runTimeoutMs).toEqual({ value: "5000", source: "env" });
    expect(v.path).toEqual({ value: "/hook", source: "env" });
    expect(v.repoPath).toEqual({ value: repo.clone, source: "default" });
    expect(v.keepDeploys!.source).toBe("default");
    expect(v.maxLogBytes!.source).toBe("default");
    expect(v.secret!.source).toBe("file");
    expect(v.secret!.value).not.toContain(fileSecret);
    expect(`${result.stdout}${result.stderr}`).not.toContain(fileSecret);
  });

  test("a multi-line runScript is printed line under line, indented to the value column: the table stays whole", async () => {
    const repo = makeRepo();
    writeFileSync(
      join(repo.clone, "service.yaml"),
      ["runScript: |", "  npm ci", "  # build", "  npm run build", "port: 4321", ""].join("\n"),
    );
    const result = await check(repo.clone);
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    const first = lines.findIndex((line) => /^ {2}runScript\s+npm ci\s+\[file\]$/.test(line));
    expect(first).toBeGreaterThan(0);
    const column = lines[first]!.indexOf("npm ci");
    expect(lines.slice(first + 1, first + 3)).toEqual([
      `${" ".repeat(column)}# build`,
      `${" ".repeat(column)}npm run build`,
    ]);
    // Every value line keeps its shape, and no script line lands at the start of a line.
    const v = values(result.stdout);
    expect(v.port).toEqual({ value: "4321", source: "file" });
    expect(v.runScript).toEqual({ value: "npm ci", source: "file" });
    expect(lines.filter((line) => /^npm|^# build/.test(line))).toEqual([]);
    expect(lines.filter((line) => line !== line.trimEnd())).toEqual([]);
  });

  test("check --cwd DIR checks the service whose working directory is DIR, from another directory", async () => {
    const repo = makeRepo();
    const serviceDir = tempDir("service-home-");
    writeFileSync(join(serviceDir, "service.yaml"), `repoPath: ${repo.clone}\nport: 4321\n`);
    const result = await runCli(["check", "--cwd", serviceDir], { cwd: repo.clone });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`config file: ${join(serviceDir, "service.yaml")}`);
    expect(values(result.stdout).port).toEqual({ value: "4321", source: "file" });
    expect(values(result.stdout).secret!.value).toContain(join(serviceDir, ".service.secret"));
  });

  test("SERVICE_SECRET shows as [env], masked; with no file the defaults apply", async () => {
    const repo = makeRepo();
    const envSecret = "env-secret-value-13579";
    const result = await check(repo.clone, { SERVICE_SECRET: envSecret, SERVICE_KEEP_DEPLOYS: "7" });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("config file: none");
    const v = values(result.stdout);
    expect(v.secret!.source).toBe("env");
    expect(v.keepDeploys).toEqual({ value: "7", source: "env" });
    expect(v.port).toEqual({ value: "3141", source: "default" });
    expect(v.runScript).toEqual({ value: "npm run deploy", source: "default" });
    expect(`${result.stdout}${result.stderr}`).not.toContain(envSecret);
  });

  test("boundConnections is printed as its effective value and why: on for a port off loopback, off on loopback, per listener", async () => {
    const repo = makeRepo();
    const open = values((await check(repo.clone, { SERVICE_SECRET: "sixteen-chars-ok" })).stdout);
    expect(open.boundConnections).toEqual({
      value: "true (hostname 0.0.0.0 is not loopback: clients connect directly)",
      source: "default",
    });
    const proxied = values(
      (
        await check(repo.clone, {
          SERVICE_SECRET: "sixteen-chars-ok",
          SERVICE_HOSTNAME: "127.0.0.1",
          SERVICE_ADMIN_PORT: "9090",
        })
      ).stdout,
    );
    expect(proxied.boundConnections).toEqual({
      value:
        "false (hostname 127.0.0.1 is loopback: a proxy in front holds the connections); admin listener: false (adminHostname 127.0.0.1 is loopback)",
      source: "default",
    });
    const set = values(
      (await check(repo.clone, { SERVICE_SECRET: "sixteen-chars-ok", SERVICE_BOUND_CONNECTIONS: "true" })).stdout,
    );
    expect(set.boundConnections).toEqual({ value: "true (every port)", source: "env" });
  });

  test("a listener on loopback without trustProxy is warned about (behind a proxy every client shares one address); check still exits 0", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: "sixteen-chars-ok", SERVICE_HOSTNAME: "127.0.0.1" };
    const warned = await check(repo.clone, env);
    expect(warned.code).toBe(0);
    expect(warned.stdout).toContain(
      "warning: the webhook port listens on loopback (127.0.0.1) without trustProxy: behind a proxy every client then shares the proxy's address",
    );
    const admin = await check(repo.clone, { ...env, SERVICE_ADMIN_PORT: "9090" });
    expect(admin.stdout).toContain(
      "warning: the webhook port and the admin listener listen on loopback (127.0.0.1) without trustProxy",
    );
    const trusted = await check(repo.clone, { ...env, SERVICE_ADMIN_PORT: "9090", SERVICE_TRUST_PROXY: "true" });
    expect(trusted.stdout).not.toContain("warning:");
    const direct = await check(repo.clone, { SERVICE_SECRET: "sixteen-chars-ok" });
    expect(direct.stdout).not.toContain("warning:");
  });

  test("a secret stored in .service.secret is named by its file, never printed", async () => {
    const repo = makeRepo();
    const stored = "stored-secret-value-24680";
    writeFileSync(join(repo.clone, ".service.secret"), `${stored}\n`, { mode: 0o600 });
    const result = await check(repo.clone);
    expect(result.code).toBe(0);
    expect(values(result.stdout).secret!.source).toBe("secret file");
    expect(result.stdout).toContain(join(repo.clone, ".service.secret"));
    expect(`${result.stdout}${result.stderr}`).not.toContain(stored);
  });

  test("multi-app mode: each app with its route and repository; configured app secrets are masked", async () => {
    const a = makeRepo();
    const b = makeRepo();
    const cwd = tempDir("service-check-");
    writeFileSync(
      join(cwd, "service.yaml"),
      [
        "apps:",
        "  - name: alpha",
        "    host: a.example.com",
        "    path: /hook",
        `    repoPath: ${a.clone}`,
        "    runScript: 'true'",
        "    secret: alpha-app-secret-111",
        "  - name: beta",
        "    host: b.example.com",
        "    path: /hook",
        `    repoPath: ${b.clone}`,
        "    runScript: 'true'",
        "",
      ].join("\n"),
    );
    const result = await check(cwd);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("app alpha: POST a.example.com/hook");
    expect(result.stdout).toContain(`repo: ${a.clone}`);
    expect(result.stdout).toContain("app beta: POST b.example.com/hook");
    expect(result.stdout).toContain(`repo: ${b.clone}`);
    expect(result.stdout).not.toContain("alpha-app-secret-111");
  });
});

describe("service check: problems", () => {
  test("an unknown key (with a did-you-mean), several wrong types and a missing repo directory: exit 1, all listed", async () => {
    const cwd = tempDir("service-check-");
    const missing = join(cwd, "no-such-dir");
    writeFileSync(
      join(cwd, "service.yaml"),
      [
        "prot: 8080",
        "runTimeoutMs: soon",
        "rollbackOnFailure: maybe",
        "keepDeploys: -1",
        `repoPath: ${missing}`,
        "",
      ].join("\n"),
    );
    const result = await check(cwd, { SERVICE_PORT: "not-a-port" });
    expect(result.code).toBe(1);
    const listed = problems(result.stdout);
    expect(result.stdout).toContain(`${listed.length} problems:`);
    const has = (...parts: string[]) => expect(listed.some((p) => parts.every((part) => p.includes(part)))).toBe(true);
    has('unknown key "prot"', 'did you mean "port"?');
    has('"runTimeoutMs"', "soon");
    has('"rollbackOnFailure"', "maybe");
    has('"keepDeploys"', "-1");
    has("SERVICE_PORT", "not-a-port");
    has(missing, "does not exist");
    expect(listed).toHaveLength(6);
  });

  test("a millisecond value above 2147483647 (SERVICE_RUN_TIMEOUT_MS=2592000000, heartbeatMs in the file): exit 1, key and maximum named", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo.clone, "service.yaml"), "heartbeatMs: 2147483648\n");
    const result = await check(repo.clone, { SERVICE_RUN_TIMEOUT_MS: "2592000000", SERVICE_SECRET: "some-secret-123" });
    expect(result.code).toBe(1);
    const listed = problems(result.stdout);
    expect(listed).toHaveLength(2);
    expect(listed.some((p) => p.includes("SERVICE_RUN_TIMEOUT_MS") && p.includes("2147483647"))).toBe(true);
    expect(listed.some((p) => p.includes('"heartbeatMs"') && p.includes("2147483647"))).toBe(true);
  });

  test("a path with control characters and an invalid hostname are refused, naming the key (in apps entries too)", async () => {
    const repo = makeRepo();
    writeFileSync(
      join(repo.clone, "service.yaml"),
      [
        'path: "/hook\\u0000x"',
        "hostname: 127.0.0.1:4016",
        "apps:",
        `  - {name: a, host: a.example.com, path: "/a\\tb", repoPath: ${repo.clone}, runScript: "true"}`,
        "",
      ].join("\n"),
    );
    const result = await check(repo.clone, { SERVICE_SECRET: "some-secret-123" });
    expect(result.code).toBe(1);
    const listed = problems(result.stdout);
    const has = (...parts: string[]) => expect(listed.some((p) => parts.every((part) => p.includes(part)))).toBe(true);
    has('key "path"', "control characters", "\\u0000");
    has('key "hostname"', "127.0.0.1:4016");
    has("entry 1", '"path"', "control characters");
    expect(result.stdout).not.toContain("\u0000");

    writeFileSync(
      join(repo.clone, "service.yaml"),
      `apps:\n  - {name: b, host: "b.example.com\\u0007", path: /b, repoPath: ${repo.clone}, runScript: "true"}\n`,
    );
    const hostResult = await check(repo.clone);
    expect(hostResult.code).toBe(1);
    expect(
      problems(hostResult.stdout).some((p) => p.includes("apps entry 1") && p.includes("is not a host name")),
    ).toBe(true);
    expect(hostResult.stdout).not.toContain("\u0007");
  });

  test("SERVICE_PATH with a control character and SERVICE_HOSTNAME that is not an address: exit 1, named", async () => {
    const repo = makeRepo();
    const result = await check(repo.clone, {
      SERVICE_PATH: "/x\ty",
      SERVICE_HOSTNAME: "http://localhost",
      SERVICE_SECRET: "some-secret-123",
    });
    expect(result.code).toBe(1);
    const listed = problems(result.stdout);
    expect(listed.some((p) => p.includes("SERVICE_PATH"))).toBe(true);
    expect(listed.some((p) => p.includes("SERVICE_HOSTNAME") && p.includes("http://localhost"))).toBe(true);
  });

  test("a config file over 1 MiB: exit 1, named with its size and the limit", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo.clone, "service.yaml"), `port: 4000\n# ${"x".repeat(1024 * 1024)}\n`);
    const result = await check(repo.clone, { SERVICE_SECRET: "some-secret-123" });
    expect(result.code).toBe(1);
    expect(
      problems(result.stdout).some(
        (p) => p.includes(join(repo.clone, "service.yaml")) && p.includes("at most 1 MiB (1048576 bytes)"),
      ),
    ).toBe(true);
    expect(values(result.stdout).port).toEqual({ value: "3141", source: "default" });
  });

  test("a repoPath that is not a git repository: exit 1, named", async () => {
    const cwd = tempDir("service-check-");
    const plain = join(cwd, "plain");
    mkdirSync(plain);
    const result = await check(cwd, { SERVICE_REPO_PATH: plain, SERVICE_SECRET: "some-secret-123" });
    expect(result.code).toBe(1);
    expect(problems(result.stdout)).toEqual([`repoPath ${plain} is not a git repository (git pull will fail)`]);
    expect(values(result.stdout).repoPath).toEqual({ value: plain, source: "env" });
  });

  test("a repository whose queue directory cannot be made: exit 1, named (deploys there could not queue)", async () => {
    const repo = makeRepo();
    const blocker = join(repo.clone, ".git", "service-deploy-queue");
    writeFileSync(blocker, "");
    const result = await check(repo.clone, { SERVICE_SECRET: "some-secret-123" });
    expect(result.code).toBe(1);
    expect(problems(result.stdout)).toEqual([`${blocker} is not a directory: deploys cannot queue (remove it)`]);
  });

  test("duplicate apps, a bad app entry and another app's missing repository: every problem listed", async () => {
    const good = makeRepo();
    const cwd = tempDir("service-check-");
    const missing = join(cwd, "gone");
    const notGit = join(cwd, "not-git");
    mkdirSync(notGit);
    const app = (name: string, host: string, path: string, repo: string) =>
      [
        `  - name: ${name}`,
        `    host: ${host}`,
        `    path: ${path}`,
        `    repoPath: ${repo}`,
        "    runScript: 'true'",
      ].join("\n");
    writeFileSync(
      join(cwd, "service.yaml"),
      [
        "apps:",
        app("web", "a.example.com", "/hook", good.clone),
        app("web", "b.example.com", "/hook", good.clone), // same name
        app("api", "a.example.com", "/hook", good.clone), // same host + path as the first
        app("docs", "c.example.com", "/hook", missing),
        app("blog", "d.example.com", "/hook", notGit),
        "  - name: nohost\n    path: /x\n    repoPath: /tmp\n    runScript: 'true'", // host missing
        "",
      ].join("\n"),
    );
    const result = await check(cwd);
    expect(result.code).toBe(1);
    const listed = problems(result.stdout);
    const has = (...parts: string[]) => expect(listed.some((p) => parts.every((part) => p.includes(part)))).toBe(true);
    has("apps entry 2", '"web"', "already used");
    has("apps entry 3", "a.example.com", "already the route");
    has('app "docs"', missing, "does not exist");
    has('app "blog"', notGit, "not a git repository");
    has("apps entry 6", '"host" is required');
    expect(listed).toHaveLength(5);
    // The good app is still reported.
    expect(result.stdout).toContain("app web: POST a.example.com/hook");
  });

  test("twenty apps: each app's repository is checked, its problem listed in the order of the apps", async () => {
    const good = makeRepo();
    const cwd = tempDir("service-check-");
    // Every third app's repoPath is a plain directory: its problem names that app, in the order of the apps.
    const names = Array.from({ length: 20 }, (_, i) => `app${String(i).padStart(2, "0")}`);
    const repoOf = (i: number) => (i % 3 === 2 ? join(cwd, names[i]!) : good.clone);
    for (const [i, name] of names.entries()) if (i % 3 === 2) mkdirSync(join(cwd, name));
    const entries = names.map((name, i) =>
      [
        `  - name: ${name}`,
        `    host: ${name}.example.com`,
        "    path: /hook",
        `    repoPath: ${repoOf(i)}`,
        "    runScript: 'true'",
      ].join("\n"),
    );
    writeFileSync(join(cwd, "service.yaml"), ["apps:", ...entries, ""].join("\n"));
    const result = await check(cwd);
    expect(result.code).toBe(1);
    const expected = names
      .map((name, i) => [name, i] as const)
      .filter(([, i]) => i % 3 === 2)
      .map(([name, i]) => `app "${name}": repoPath ${repoOf(i)} is not a git repository (git pull will fail)`);
    expect(problems(result.stdout)).toEqual(expected);
  });

  test("an apps list rejected for a bad key is listed, without a misleading single-app check of the working directory", async () => {
    const repo = makeRepo();
    const cwd = tempDir("service-check-");
    writeFileSync(
      join(cwd, "service.yaml"),
      [
        "apps:",
        "  - name: web",
        "    hots: a.example.com",
        "    path: /hook",
        `    repoPath: ${repo.clone}`,
        "    runScript: 'true'",
        "",
      ].join("\n"),
    );
    const result = await check(cwd);
    expect(result.code).toBe(1);
    const listed = problems(result.stdout);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toContain('key "hots" is not allowed in an app');
    expect(result.stdout).not.toContain("is not a git repository");

    // An empty list is single-app mode: the working directory is checked as the repository.
    writeFileSync(join(cwd, "service.yaml"), "apps: []\n");
    const single = await check(cwd);
    expect(problems(single.stdout)).toEqual([`repoPath ${cwd} is not a git repository (git pull will fail)`]);
  });

  test("every wrong key of every apps entry is listed, not only the first of each entry", async () => {
    const repo = makeRepo();
    const cwd = tempDir("service-check-");
    writeFileSync(
      join(cwd, "service.yaml"),
      [
        "apps:",
        "  - name: web",
        "    hots: a.example.com",
        "    path: hook",
        "    queue_limit: many",
        `    repoPath: ${repo.clone}`,
        "    runScript: 'true'",
        "  - name: api",
        "    host: b.example.com",
        "    path: /hook",
        "    port: 8080",
        "    keepDays: -1",
        `    repoPath: ${repo.clone}`,
        "    runScript: 'true'",
        "",
      ].join("\n"),
    );
    const result = await check(cwd);
    expect(result.code).toBe(1);
    const listed = problems(result.stdout);
    const expected = [
      ['entry 1 ("web")', 'key "hots" is not allowed in an app'],
      ['entry 1 ("web")', 'key "path"', 'a URL path starting with "/"'],
      ['entry 1 ("web")', 'key "queue_limit"', "a positive integer"],
      ['entry 2 ("api")', 'key "port" is not allowed in an app'],
      ['entry 2 ("api")', 'key "keepDays"', "a whole number"],
    ];
    expect(listed).toHaveLength(expected.length);
    for (const [index, parts] of expected.entries()) for (const part of parts) expect(listed[index]).toContain(part);
  });

  test("an invalid YAML file: exit 1, the parse error named with the file", async () => {
    const repo = makeLocalRepo();
    writeFileSync(join(repo, "service.yaml"), "port: [3141\nrunScript: echo\n");
    const result = await check(repo);
    expect(result.code).toBe(1);
    const listed = problems(result.stdout);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toContain(`${join(repo, "service.yaml")} is not valid YAML`);
  });
});

describe("the server says the same problems at start", () => {
  test("a repoPath that is not a git repository and an unknown key: listed by check --problems, warned at start, and the server still starts", async () => {
    const cwd = tempDir("service-check-");
    const plain = join(cwd, "plain");
    mkdirSync(plain);
    writeFileSync(join(cwd, "service.yaml"), [`repoPath: ${plain}`, "runSript: echo typo", ""].join("\n"));
    const env = { SERVICE_SECRET: "server-secret-value-1" };
    const report = await check(cwd, env);
    expect(report.code).toBe(1);
    const listed = problems(report.stdout);
    expect(listed).toHaveLength(2);
    // `--problems`: the same problems, one per line, nothing else (what the server runs at its start).
    const only = await runCli(["check", "--problems"], { cwd, env });
    expect(only.code).toBe(1);
    expect(only.stdout.trimEnd().split("\n")).toEqual(listed);
    await using server = await startServer(cwd, env);
    // Said once it listens, before the banner.
    const output = `${server.stdout.text}${server.stderr.text}`;
    for (const problem of listed) expect(output).toContain(problem);
    expect(output).toContain('did you mean "runScript"?');
    expect(output).toContain("is not a git repository");
    expect(server.proc.exitCode).toBeNull();
  });

  test("a configuration without problems: check --problems prints nothing and exits 0", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo.clone, "service.yaml"), "runScript: echo ok\n");
    const only = await runCli(["check", "--problems"], {
      cwd: repo.clone,
      env: { SERVICE_SECRET: "server-secret-value-1" },
    });
    expect(only).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });
});
