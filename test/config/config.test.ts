import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatWithOptions } from "node:util";
import { createConsola } from "consola";
import { loadConfig, loadedFromOf } from "../../src/config/load.ts";
import { resolveConfig } from "../../src/config/resolve.ts";
import { KEYS } from "../../src/config/keys.ts";
import { ConfigError } from "../../src/config/schema.ts";
import { boundedPort } from "../../src/system/address.ts";
import {
  baseEnv,
  lastLine,
  makeRepo,
  post,
  ROOT,
  runCli,
  runProcess,
  SECRET,
  startServer,
  tempDir,
} from "../_support/helpers.ts";

// bunfig.toml's [test] timeout is not applied by this Bun (5 s default): real servers and deploys need more room.
setDefaultTimeout(30_000);

/** A logger that keeps what it is given, so warnings can be asserted on. */
function captureLogger() {
  const messages: string[] = [];
  const logger = createConsola({
    level: 5,
    reporters: [
      { log: (entry) => messages.push(`[${entry.type}] ${formatWithOptions({ colors: false }, ...entry.args)}`) },
    ],
  });
  return { logger, messages };
}

/** A fresh working directory holding `files` (name → content). */
function workdir(files: Record<string, string> = {}): string {
  const dir = tempDir("service-config-");
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return dir;
}

/** The banner line that starts with `prefix`, without the prefix. */
function bannerLine(stdout: string, prefix: string): string | undefined {
  return stdout
    .split("\n")
    .find((line) => line.startsWith(prefix))
    ?.slice(prefix.length);
}

const CONFIG_NAMES = ["service.yaml", "service.yml", ".service.yaml", ".service.yml"] as const;

describe('Configuration lookup (docs/configuration.md "Configuration", lookup order)', () => {
  // Each row: the names present in the working directory, and the one that must win.
  const cases: { present: string[]; wins: string }[] = [
    { present: [...CONFIG_NAMES], wins: "service.yaml" },
    { present: ["service.yml", ".service.yaml", ".service.yml"], wins: "service.yml" },
    { present: [".service.yaml", ".service.yml"], wins: ".service.yaml" },
    { present: [".service.yml"], wins: ".service.yml" },
    { present: ["service.yaml", ".service.yml"], wins: "service.yaml" },
    { present: ["service.yml", ".service.yml"], wins: "service.yml" },
  ];
  for (const { present, wins } of cases) {
    test(`the first existing name wins: with ${present.join(", ")} present, ${wins} is used`, () => {
      const cwd = workdir(Object.fromEntries(present.map((name) => [name, `run_script: echo from ${name}\n`])));
      expect(loadConfig({ cwd, env: {} }).runScript).toBe(`echo from ${wins}`);
    });
  }

  test("with no config file, only environment variables and defaults apply", () => {
    const cwd = workdir({ "other.yaml": "port: 1\n", "service.yaml.example": "port: 2\n" });
    const { logger, messages } = captureLogger();
    expect(loadConfig({ cwd, env: { SERVICE_PATH: "/hook" }, logger })).toMatchObject({ port: 3141, path: "/hook" });
    expect(messages).toEqual([]);
  });

  test("the CLI banner's run line comes from the first existing config name in the working directory", async () => {
    const cwd = workdir({
      "service.yml": "run_script: echo from-service-yml\n",
      ".service.yaml": "run_script: echo from-dot-service-yaml\n",
      ".service.yml": "run_script: echo from-dot-service-yml\n",
    });
    {
      await using first = await startServer(cwd, { SERVICE_SECRET: SECRET });
      expect(bannerLine(first.stdout.text, "run: ")).toBe("echo from-service-yml");
    }
    writeFileSync(join(cwd, "service.yaml"), "run_script: echo from-service-yaml\n");
    await using second = await startServer(cwd, { SERVICE_SECRET: SECRET });
    expect(bannerLine(second.stdout.text, "run: ")).toBe("echo from-service-yaml");
  });
});

describe('SERVICE_CONFIG (docs/configuration.md "Configuration", SERVICE_CONFIG names a different path)', () => {
  test("SERVICE_CONFIG relative to the working directory wins over service.yaml", () => {
    const cwd = workdir({ "service.yaml": "run_script: echo auto\n", "conf/custom.yaml": "run_script: echo custom\n" });
    expect(loadConfig({ cwd, env: { SERVICE_CONFIG: "conf/custom.yaml" } }).runScript).toBe("echo custom");
  });

  test("SERVICE_CONFIG as an absolute path wins over every auto-detected name", () => {
    const elsewhere = workdir({ "deploy-config.yml": "run_script: echo absolute\nport: 4000\n" });
    const cwd = workdir(Object.fromEntries(CONFIG_NAMES.map((name) => [name, "run_script: echo auto\n"])));
    const config = loadConfig({ cwd, env: { SERVICE_CONFIG: join(elsewhere, "deploy-config.yml") } });
    expect(config.runScript).toBe("echo absolute");
    expect(config.port).toBe(4000);
  });

  test("SERVICE_CONFIG naming a missing file: no auto-detected file is used, env and defaults apply, with a warning", () => {
    const cwd = workdir({ "service.yaml": "run_script: echo auto\n" });
    const { logger, messages } = captureLogger();
    const config = loadConfig({ cwd, env: { SERVICE_CONFIG: "missing.yaml" }, logger });
    expect(config.runScript).toBe("npm run deploy");
    expect(messages.some((m) => m.startsWith("[warn]") && m.includes(join(cwd, "missing.yaml")))).toBe(true);
  });

  test("the CLI uses the SERVICE_CONFIG file over service.yaml", async () => {
    const cwd = workdir({
      "service.yaml": "run_script: echo auto\n",
      "conf/custom.yaml": "run_script: echo from-custom\npath: /custom\n",
    });
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET, SERVICE_CONFIG: "conf/custom.yaml" });
    expect(bannerLine(server.stdout.text, "run: ")).toBe("echo from-custom");
    expect(bannerLine(server.stdout.text, "webhook: POST ")).toBe("/custom");
  });
});

describe('Config keys (docs/configuration.md "Configuration", camelCase or snake_case)', () => {
  const spellings: { camel: string; snake: string; yaml: string; key: string; value: unknown }[] = [
    { camel: "repoPath", snake: "repo_path", yaml: "/srv/app", key: "repoPath", value: "/srv/app" },
    { camel: "runScript", snake: "run_script", yaml: "make deploy", key: "runScript", value: "make deploy" },
    { camel: "runTimeoutMs", snake: "run_timeout_ms", yaml: "5000", key: "runTimeoutMs", value: 5000 },
    { camel: "rollbackOnFailure", snake: "rollback_on_failure", yaml: "true", key: "rollbackOnFailure", value: true },
  ];
  for (const { camel, snake, yaml, key, value } of spellings) {
    for (const written of [camel, snake]) {
      test(`the key may be written ${written}`, () => {
        const cwd = workdir({ "service.yaml": `${written}: ${yaml}\n` });
        const { logger, messages } = captureLogger();
        expect((loadConfig({ cwd, env: {}, logger }) as unknown as Record<string, unknown>)[key]).toEqual(value);
        expect(messages).toEqual([]);
      });
    }
  }

  test("every file key of the table is read: port, repoPath, runScript, runTimeoutMs, rollbackOnFailure, path, secret", () => {
    const cwd = workdir({
      "service.yaml": [
        "port: 8080",
        "repo_path: /srv/app",
        "run_script: |",
        "  echo one",
        "  echo two",
        "run_timeout_ms: 60000",
        "rollback_on_failure: true",
        "path: /hooks/deploy",
        "secret: file-secret",
        "",
      ].join("\n"),
    });
    expect(loadConfig({ cwd, env: {} })).toMatchObject({
      port: 8080,
      repoPath: "/srv/app",
      runScript: "echo one\necho two\n",
      runTimeoutMs: 60000,
      rollbackOnFailure: true,
      path: "/hooks/deploy",
      secret: "file-secret",
    });
  });
});

describe('Environment variables (docs/configuration.md "Configuration", environment variables override file values)', () => {
  const file = [
    "port: 8080",
    "repo_path: /from/file",
    "run_script: echo file",
    "run_timeout_ms: 60000",
    "rollback_on_failure: true",
    "path: /file",
    "secret: file-secret",
    "",
  ].join("\n");
  const overrides: { name: string; value: string; key: string; expected: unknown }[] = [
    { name: "SERVICE_PORT", value: "9090", key: "port", expected: 9090 },
    { name: "SERVICE_REPO_PATH", value: "/from/env", key: "repoPath", expected: "/from/env" },
    { name: "SERVICE_RUN_SCRIPT", value: "echo env", key: "runScript", expected: "echo env" },
    { name: "SERVICE_RUN_TIMEOUT_MS", value: "1234", key: "runTimeoutMs", expected: 1234 },
    { name: "SERVICE_ROLLBACK_ON_FAILURE", value: "false", key: "rollbackOnFailure", expected: false },
    { name: "SERVICE_PATH", value: "/env", key: "path", expected: "/env" },
    { name: "SERVICE_SECRET", value: "env-secret", key: "secret", expected: "env-secret" },
  ];
  for (const { name, value, key, expected } of overrides) {
    test(`${name} overrides the file key ${key}`, () => {
      const cwd = workdir({ "service.yaml": file });
      const fromFile = loadConfig({ cwd, env: {} }) as unknown as Record<string, unknown>;
      expect(fromFile[key]).not.toEqual(expected);
      const config = loadConfig({ cwd, env: { [name]: value } }) as unknown as Record<string, unknown>;
      expect(config[key]).toEqual(expected);
    });
  }

  test("SERVICE_ROLLBACK_ON_FAILURE=true turns rollback on over a file that leaves it off", () => {
    const cwd = workdir({ "service.yaml": "rollback_on_failure: false\n" });
    expect(loadConfig({ cwd, env: { SERVICE_ROLLBACK_ON_FAILURE: "true" } }).rollbackOnFailure).toBe(true);
  });

  test("the CLI banner shows environment values over file values", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo.clone, "service.yaml"), "run_script: echo file\npath: /file\n");
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "echo env",
      SERVICE_PATH: "/env",
    });
    expect(bannerLine(server.stdout.text, "run: ")).toBe("echo env");
    expect(bannerLine(server.stdout.text, "webhook: POST ")).toBe("/env");
    const wrong = await post(`${server.url}/file`, { secret: SECRET });
    expect(wrong.status).toBe(404);
    await wrong.text();
    const res = await post(`${server.url}/env`, { secret: SECRET });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("env\n");
    expect(text).not.toContain("file\n");
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
  });
});

describe('Defaults (docs/configuration.md "Configuration", Default column)', () => {
  test("port 3141, repoPath = working directory, runScript npm run deploy, runTimeoutMs 1800000, rollbackOnFailure false, path /", () => {
    const cwd = workdir();
    const config = loadConfig({ cwd, env: {} });
    expect(config.port).toBe(3141);
    expect(config.repoPath).toBe(cwd);
    expect(config.runScript).toBe("npm run deploy");
    expect(config.runTimeoutMs).toBe(1_800_000);
    expect(config.rollbackOnFailure).toBe(false);
    expect(config.path).toBe("/");
    expect(config.secret).toBeUndefined();
  });

  test("boundConnections: unset, a port is bounded unless on loopback; set, as it says (file and environment)", () => {
    const cwd = workdir({ "service.yaml": "hostname: 127.0.0.1\n" });
    const unset = loadConfig({ cwd, env: {} });
    expect(unset.boundConnections).toBeUndefined();
    expect(boundedPort(unset.hostname, unset.boundConnections)).toBe(false);
    for (const host of ["0.0.0.0", "::", "192.0.2.7", "example.com"]) expect(boundedPort(host, undefined)).toBe(true);
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"])
      expect(boundedPort(host, undefined)).toBe(false);
    const on = loadConfig({ cwd, env: { SERVICE_BOUND_CONNECTIONS: "true" } });
    expect(boundedPort(on.hostname, on.boundConnections)).toBe(true);
    const off = loadConfig({ cwd: workdir({ "service.yaml": "boundConnections: false\n" }), env: {} });
    expect(boundedPort(off.hostname, off.boundConnections)).toBe(false);
  });

  test("an empty config file means defaults", () => {
    const cwd = workdir({ "service.yaml": "# nothing set yet\n" });
    expect(loadConfig({ cwd, env: {} })).toMatchObject({ port: 3141, runScript: "npm run deploy", path: "/" });
  });

  test("the CLI banner shows the defaults: repo is the working directory, run is npm run deploy", async () => {
    const cwd = workdir();
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET });
    expect(bannerLine(server.stdout.text, "repo: ")).toBe(cwd);
    expect(bannerLine(server.stdout.text, "run: ")).toBe("npm run deploy");
    expect(bannerLine(server.stdout.text, "webhook: POST ")).toBe("/");
  });
});

describe('Invalid config file (docs/configuration.md "Configuration", if the file is invalid only env and defaults apply)', () => {
  const invalid: { what: string; write: (cwd: string) => void; mentions: RegExp }[] = [
    {
      what: "YAML that does not parse",
      write: (cwd) => writeFileSync(join(cwd, "service.yaml"), "run_script: [unclosed\nport: 1\n"),
      mentions: /not valid YAML: .*\S/,
    },
    {
      what: "a top level that is a list",
      write: (cwd) => writeFileSync(join(cwd, "service.yaml"), "- port: 1\n"),
      mentions: /top level must be a mapping/,
    },
    {
      what: "an unreadable file (a directory named service.yaml)",
      write: (cwd) => mkdirSync(join(cwd, "service.yaml")),
      mentions: /cannot read/,
    },
  ];
  for (const { what, write, mentions } of invalid) {
    test(`${what}: loadConfig warns naming the file and the error, then env and defaults apply`, () => {
      const cwd = workdir({ "service.yml": "run_script: echo not-the-first-name\n" });
      write(cwd);
      const { logger, messages } = captureLogger();
      const config = loadConfig({ cwd, env: { SERVICE_PATH: "/from-env" }, logger });
      expect(config.runScript).toBe("npm run deploy");
      expect(config.port).toBe(3141);
      expect(config.path).toBe("/from-env");
      const warnings = messages.filter((m) => m.startsWith("[warn]"));
      expect(warnings.length).toBe(1);
      expect(warnings[0]).toContain(join(cwd, "service.yaml"));
      expect(warnings[0]).toMatch(mentions);
    });
  }

  test("the YAML error in the warning says where the file is broken", () => {
    const cwd = workdir({ "service.yaml": "port: 1\nrun_script: [unclosed\n" });
    const { logger, messages } = captureLogger();
    loadConfig({ cwd, env: {}, logger });
    expect(messages.join("\n")).toMatch(/line \d+, column \d+/);
  });

  test("the CLI still starts with an invalid service.yaml and its output shows the warning once", async () => {
    const cwd = workdir({ "service.yaml": "run_script: [unclosed\n" });
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo from-env" });
    expect(bannerLine(server.stdout.text, "run: ")).toBe("echo from-env");
    const output = server.stdout.text + server.stderr.text;
    const warnings = output.split("\n").filter((line) => line.includes(join(cwd, "service.yaml")));
    expect(warnings.length).toBe(1);
    expect(warnings[0]).toContain("not valid YAML");
    expect(output).not.toMatch(/^\s+at /m);
  });

  test("the CLI still starts when service.yaml cannot be read (a directory), and says so", async () => {
    const cwd = workdir();
    mkdirSync(join(cwd, "service.yaml"));
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET });
    expect(bannerLine(server.stdout.text, "run: ")).toBe("npm run deploy");
    expect(server.stdout.text + server.stderr.text).toContain(`cannot read ${join(cwd, "service.yaml")}`);
  });
});

describe('Wrong-typed values (docs/configuration.md "Configuration", Type column)', () => {
  const wrong: { what: string; file?: string; env?: Record<string, string>; names: string }[] = [
    { what: "port: abc", file: "port: abc\n", names: '"port"' },
    { what: "port: 70000", file: "port: 70000\n", names: '"port"' },
    { what: "run_timeout_ms: -5", file: "run_timeout_ms: -5\n", names: '"run_timeout_ms"' },
    { what: "runTimeoutMs: 1.5", file: "runTimeoutMs: 1.5\n", names: '"runTimeoutMs"' },
    { what: "rollback_on_failure: maybe", file: "rollback_on_failure: maybe\n", names: '"rollback_on_failure"' },
    { what: "path: no-slash", file: "path: no-slash\n", names: '"path"' },
    { what: "run_script: a list", file: "run_script: [a, b]\n", names: '"run_script"' },
    { what: "SERVICE_PORT=abc", env: { SERVICE_PORT: "abc" }, names: "SERVICE_PORT" },
    { what: "SERVICE_RUN_TIMEOUT_MS=0", env: { SERVICE_RUN_TIMEOUT_MS: "0" }, names: "SERVICE_RUN_TIMEOUT_MS" },
    {
      what: "SERVICE_ROLLBACK_ON_FAILURE=maybe",
      env: { SERVICE_ROLLBACK_ON_FAILURE: "maybe" },
      names: "SERVICE_ROLLBACK_ON_FAILURE",
    },
    { what: "SERVICE_PATH=no-slash", env: { SERVICE_PATH: "no-slash" }, names: "SERVICE_PATH" },
  ];
  for (const { what, file, env = {}, names } of wrong) {
    test(`${what}: loadConfig throws a ConfigError naming ${names}`, () => {
      const cwd = workdir(file ? { "service.yaml": file } : {});
      let caught: unknown;
      try {
        loadConfig({ cwd, env });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      expect((caught as Error).message).toContain(names);
      expect((caught as Error).message).not.toContain("\n");
    });
  }

  for (const { what, file, env = {}, names } of wrong.filter((w) =>
    ["port: abc", "run_timeout_ms: -5", "rollback_on_failure: maybe", "path: no-slash", "SERVICE_PORT=abc"].includes(
      w.what,
    ),
  )) {
    test(`${what}: the CLI exits non-zero with one clear line naming ${names} and no stack trace`, async () => {
      const cwd = workdir(file ? { "service.yaml": file } : {});
      const result = await runCli([], {
        cwd,
        env: { SERVICE_SECRET: SECRET, SERVICE_PORT: "0", ...env },
        timeoutMs: 20_000,
      });
      expect(result.code).not.toBe(0);
      expect(result.code).not.toBeNull();
      const lines = (result.stdout + result.stderr).split("\n").filter((line) => line.trim() !== "");
      expect(lines.length).toBe(1);
      expect(lines[0]).toContain(names);
      expect(result.stdout + result.stderr).not.toContain("    at ");
      expect(result.stdout).not.toContain("listening on");
    });
  }
});

describe('Config reload (docs/configuration.md "Config from the repository": the config file is re-read on every webhook POST)', () => {
  test("editing runScript in service.yaml applies to the next POST without a restart", async () => {
    const repo = makeRepo();
    // The config lives in the working directory, outside the repository: only the request-time re-read sees it.
    const cwd = workdir({ "service.yaml": `repo_path: ${repo.clone}\nrun_script: echo first-script\n` });
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET });
    const first = await (await post(server.url, { secret: SECRET })).text();
    expect(first).toContain("first-script\n");
    expect(lastLine(first)).toBe("[done] ok=true exitCode=0");

    writeFileSync(join(cwd, "service.yaml"), `repo_path: ${repo.clone}\nrun_script: echo other-script\n`);
    const second = await (await post(server.url, { secret: SECRET })).text();
    expect(second).toContain("other-script\n");
    expect(second).not.toContain("first-script");
    expect(lastLine(second)).toBe("[done] ok=true exitCode=0");
  });

  test("an edit that keeps the file's size is still picked up by the next POST", async () => {
    const repo = makeRepo();
    const cwd = workdir({ "service.yaml": `repo_path: ${repo.clone}\nrun_script: echo aaaa\n` });
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET });
    // Several same-size rewrites in quick succession: a change detector built on size + mtime can miss them.
    for (const word of ["bbbb", "cccc", "dddd"]) {
      writeFileSync(join(cwd, "service.yaml"), `repo_path: ${repo.clone}\nrun_script: echo ${word}\n`);
      const text = await (await post(server.url, { secret: SECRET })).text();
      expect(text).toContain(`${word}\n`);
    }
  });

  test("editing path in service.yaml moves the webhook on the next POST; removing it restores the default /", async () => {
    const repo = makeRepo();
    const cwd = workdir({ "service.yaml": `repo_path: ${repo.clone}\nrun_script: "true"\npath: /one\n` });
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET });
    const status = async (path: string) => {
      const res = await post(`${server.url}${path}`, { secret: SECRET });
      await res.text();
      return res.status;
    };
    expect(await status("/one")).toBe(200);
    expect(await status("/")).toBe(404);

    writeFileSync(join(cwd, "service.yaml"), `repo_path: ${repo.clone}\nrun_script: "true"\npath: /two\n`);
    expect(await status("/one")).toBe(404);
    expect(await status("/two")).toBe(200);

    writeFileSync(join(cwd, "service.yaml"), `repo_path: ${repo.clone}\nrun_script: "true"\n`);
    expect(await status("/two")).toBe(404);
    expect(await status("/")).toBe(200);
  });

  test("a config file created after the start applies to the next POST", async () => {
    const repo = makeRepo();
    const cwd = workdir();
    await using server = await startServer(cwd, {
      SERVICE_SECRET: SECRET,
      SERVICE_REPO_PATH: repo.clone,
      SERVICE_RUN_SCRIPT: "echo env-script",
    });
    writeFileSync(join(cwd, "service.yaml"), "path: /late\n");
    const res = await post(`${server.url}/late`, { secret: SECRET });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("env-script\n");
  });
});

describe('repoPath (docs/configuration.md "Configuration", relative or absolute)', () => {
  test("a relative repo_path in the file resolves against the working directory", () => {
    const cwd = workdir({ "service.yaml": "repo_path: apps/site\n" });
    expect(loadConfig({ cwd, env: {} }).repoPath).toBe(join(cwd, "apps/site"));
  });

  test("a relative SERVICE_REPO_PATH resolves against the working directory", () => {
    const cwd = workdir();
    expect(loadConfig({ cwd, env: { SERVICE_REPO_PATH: "../sibling" } }).repoPath).toBe(join(cwd, "..", "sibling"));
  });

  test("the CLI deploys in a relative repoPath resolved against its working directory", async () => {
    const repo = makeRepo();
    // repo.dir holds the clone as "app": run the server from repo.dir with repo_path: app.
    writeFileSync(join(repo.dir, "service.yaml"), "repo_path: app\nrun_script: touch deployed-here.txt\n");
    await using server = await startServer(repo.dir, { SERVICE_SECRET: SECRET });
    expect(bannerLine(server.stdout.text, "repo: ")).toBe(repo.clone);
    const res = await post(server.url, { secret: SECRET });
    expect(lastLine(await res.text())).toBe("[done] ok=true exitCode=0");
    expect(readdirSync(repo.clone)).toContain("deployed-here.txt");
    expect(readdirSync(repo.dir)).not.toContain("deployed-here.txt");
  });
});

describe('Programmatic use (docs/library.md "Library")', () => {
  test("importing src/index.ts has no side effects: no files, no output, the process exits", async () => {
    const cwd = workdir();
    const { code, stdout, stderr } = await runProcess(
      [process.execPath, "-e", `await import(${JSON.stringify(join(ROOT, "src/index.ts"))})`],
      { cwd, env: baseEnv(), timeoutMs: 20_000 },
    );
    expect(code).toBe(0);
    expect(stdout).toBe("");
    expect(stderr).toBe("");
    expect(readdirSync(cwd)).toEqual([]);
  });

  test("the module exports createServiceServer, ensureWebhookSecret and loadConfig", async () => {
    const mod = await import("../../src/index.ts");
    expect(typeof mod.createServiceServer).toBe("function");
    expect(typeof mod.ensureWebhookSecret).toBe("function");
    expect(typeof mod.loadConfig).toBe("function");
  });
});

describe("Millisecond values are bounded by the longest timer (2147483647 ms, about 24.8 days)", () => {
  test("every *Ms key is a millisecond key, so none can take a value a timer cannot hold", () => {
    const msKeys = Object.entries(KEYS).filter(([key]) => key.endsWith("Ms"));
    expect(msKeys.length).toBeGreaterThanOrEqual(2);
    for (const [key, spec] of msKeys) expect(`${key}: ${spec.kind}`).toBe(`${key}: ms`);
  });

  const over: { what: string; file?: string; env?: Record<string, string>; names: string }[] = [
    {
      what: "SERVICE_RUN_TIMEOUT_MS=2592000000 (30 days)",
      env: { SERVICE_RUN_TIMEOUT_MS: "2592000000" },
      names: "SERVICE_RUN_TIMEOUT_MS",
    },
    { what: "runTimeoutMs: 2147483648", file: "runTimeoutMs: 2147483648\n", names: '"runTimeoutMs"' },
    { what: "heartbeat_ms: 9999999999", file: "heartbeat_ms: 9999999999\n", names: '"heartbeat_ms"' },
    {
      what: "SERVICE_HEARTBEAT_MS=2147483648",
      env: { SERVICE_HEARTBEAT_MS: "2147483648" },
      names: "SERVICE_HEARTBEAT_MS",
    },
    {
      what: "an apps entry with runTimeoutMs: 3000000000",
      file: "apps:\n  - {name: a, host: a.example.com, path: /, repoPath: /srv/a, runScript: 'true', runTimeoutMs: 3000000000}\n",
      names: '"runTimeoutMs"',
    },
  ];
  for (const { what, file, env = {}, names } of over) {
    test(`${what}: loadConfig throws a ConfigError naming ${names} and the maximum 2147483647`, () => {
      const cwd = workdir(file ? { "service.yaml": file } : {});
      expect(() => loadConfig({ cwd, env })).toThrow(ConfigError);
      try {
        loadConfig({ cwd, env });
      } catch (error) {
        expect((error as Error).message).toContain(names);
        expect((error as Error).message).toContain("2147483647");
      }
    });
  }

  test("2147483647 itself is accepted for every *Ms key", () => {
    const cwd = workdir({ "service.yaml": "runTimeoutMs: 2147483647\n" });
    const config = loadConfig({ cwd, env: { SERVICE_HEARTBEAT_MS: "2147483647" } });
    expect(config.runTimeoutMs).toBe(2147483647);
    expect(config.heartbeatMs).toBe(2147483647);
  });

  test("at 2147483647 (the most check accepts) for every *Ms key, a deploy runs and succeeds, with no timer overflow", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "echo deployed-with-the-longest-timeout",
      SERVICE_RUN_TIMEOUT_MS: "2147483647",
      SERVICE_HEARTBEAT_MS: "2147483647",
    });
    const text = await (await post(server.url, { secret: SECRET })).text();
    expect(text).toContain("deployed-with-the-longest-timeout");
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(server.stdout.text + server.stderr.text).not.toContain("TimeoutOverflowWarning");
  });

  test("SERVICE_RUN_TIMEOUT_MS=2147483648: the CLI refuses to start with one line naming the variable and the maximum", async () => {
    const cwd = workdir();
    const result = await runCli([], {
      cwd,
      env: { SERVICE_SECRET: SECRET, SERVICE_PORT: "0", SERVICE_RUN_TIMEOUT_MS: "2147483648" },
      timeoutMs: 20_000,
    });
    expect(result.code).toBe(1);
    const lines = (result.stdout + result.stderr).split("\n").filter((line) => line.trim() !== "");
    expect(lines.length).toBe(1);
    expect(lines[0]).toContain("SERVICE_RUN_TIMEOUT_MS");
    expect(lines[0]).toContain("2147483647");
    expect(result.stdout).not.toContain("listening on");
  });
});

describe("One config resolution: (base, file, environment) → config, sources and every problem", () => {
  test("resolveConfig says where each value came from and reports every problem instead of throwing", () => {
    const file = join(workdir(), "service.yaml");
    const text =
      "port: 4000\nrun_script: echo file\nrun_timeout_ms: soon\nhostnmae: x\napps: [{ name: 1, colour: red }]\n";
    const resolved = resolveConfig({
      cwd: "/srv",
      base: { path: "/base", runScript: "echo base" },
      file: { path: file, read: { text } },
      env: { SERVICE_PORT: "5000", SERVICE_QUEUE_LIMIT: "none" },
    });
    expect(resolved.config).toMatchObject({
      port: 5000,
      path: "/base",
      runScript: "echo file",
      runTimeoutMs: 1_800_000,
      repoPath: "/srv",
    });
    expect(resolved.sources).toMatchObject({
      port: "env",
      path: "base",
      runScript: "file",
      runTimeoutMs: "default",
      queueLimit: "default",
    });
    expect(resolved.sources.branch).toBeUndefined();
    expect(resolved.unknownKeys).toEqual([`${file}: unknown key "hostnmae" (did you mean "hostname"?)`]);
    expect(resolved.fileErrors.map((group) => group.length)).toEqual([1, 1]);
    expect(resolved.fileErrors[0]![0]).toContain('key "run_timeout_ms"');
    expect(resolved.fileErrors[1]![0]).toContain('key "apps", entry 1: key "colour" is not allowed');
    expect(resolved.setsApps).toBe(true);
    expect(resolved.envErrors).toEqual([
      'environment variable SERVICE_QUEUE_LIMIT: expected a positive integer, got "none"',
    ]);
    expect(resolved.invalid).toBeUndefined();
  });

  test("resolveConfig reads nothing: a file that cannot be used is reported, and kept file values replace the file", () => {
    const missing = resolveConfig({
      cwd: "/srv",
      file: { path: "/srv/gone.yaml", read: { invalid: "cannot read /srv/gone.yaml", missing: true } },
      env: {},
    });
    expect(missing).toMatchObject({ invalid: "cannot read /srv/gone.yaml", missing: true, fileConfig: undefined });
    expect(missing.config.runScript).toBe("npm run deploy");
    const notYaml = resolveConfig({
      cwd: "/srv",
      file: { path: "/srv/service.yaml", read: { text: "a: [" } },
      env: {},
    });
    expect(notYaml.invalid).toStartWith("/srv/service.yaml is not valid YAML: ");
    const kept = resolveConfig({
      cwd: "/srv",
      file: { path: "/srv/service.yaml", read: { text: "a: [" } },
      fileValues: { runScript: "echo kept" },
      env: {},
    });
    expect(kept.config.runScript).toBe("echo kept");
    expect(kept.sources.runScript).toBe("file");
  });

  test("a loaded config carries how it was loaded only on itself: a copy is a plain base, and nothing is enumerable", () => {
    const cwd = workdir({ "service.yaml": "run_script: echo file\n" });
    const config = loadConfig({ cwd, env: {} });
    expect(loadedFromOf(config)?.fileConfig).toEqual({ runScript: "echo file" });
    expect(loadedFromOf({ ...config })).toBeUndefined();
    expect(Object.keys(config)).toEqual(Object.keys({ ...config }));
  });
});
