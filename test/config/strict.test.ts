/**
 * Strict config mode (SERVICE_STRICT_CONFIG=1 or --strict): an unreadable or invalid config file stops the
 * start instead of falling back to the defaults (which listen on 0.0.0.0 with a new secret), and a bad edit
 * later keeps the last good configuration. Without it, the spec's fallback stays.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load.ts";
import { ConfigError } from "../../src/config/schema.ts";
import { makeRepo, post, runCli, SECRET, startServer, tempDir } from "../_support/helpers.ts";

setDefaultTimeout(30_000);

/** The file of the issue: a private address, a port and a secret, plus one bad line. */
const ISSUE_FILE = `hostname: 127.0.0.1\nport: 4016\nsecret: ${SECRET}\nrunScript: [unclosed\n`;

function nonEmptyLines(text: string): string[] {
  return text.split("\n").filter((line) => line.trim() !== "");
}

describe("strict mode stops the start on an unreadable or invalid config file", () => {
  for (const [how, args, env] of [
    ["SERVICE_STRICT_CONFIG=1", [], { SERVICE_STRICT_CONFIG: "1" }],
    ["--strict", ["--strict"], {}],
    ["serve --strict", ["serve", "--strict"], {}],
  ] as const) {
    test(`${how}: the issue's file (hostname, port, secret and one bad line) exits 1 with one line naming the file and the error`, async () => {
      const cwd = tempDir("service-strict-");
      writeFileSync(join(cwd, "service.yaml"), ISSUE_FILE);
      const result = await runCli([...args], { cwd, env: { ...env }, timeoutMs: 20_000 });
      expect(result.code).toBe(1);
      const lines = nonEmptyLines(result.stdout + result.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(join(cwd, "service.yaml"));
      expect(lines[0]).toContain("not valid YAML");
      expect(lines[0]).toContain("strict");
      expect(result.stdout).not.toContain("listening on");
      expect(result.stdout + result.stderr).not.toContain(SECRET);
    });
  }

  const invalid: { what: string; setup: (cwd: string) => Record<string, string>; mentions: string }[] = [
    {
      what: "YAML that does not parse",
      setup: (cwd) => {
        writeFileSync(join(cwd, "service.yaml"), ISSUE_FILE);
        return {};
      },
      mentions: "not valid YAML",
    },
    {
      what: "a top level that is a list",
      setup: (cwd) => {
        writeFileSync(join(cwd, "service.yaml"), "- port: 1\n");
        return {};
      },
      mentions: "top level must be a mapping",
    },
    {
      what: "an unreadable file (a directory)",
      setup: (cwd) => {
        mkdirSync(join(cwd, "service.yaml"));
        return {};
      },
      mentions: "cannot read",
    },
    {
      what: "SERVICE_CONFIG naming a missing file",
      setup: (cwd) => ({ SERVICE_CONFIG: join(cwd, "service.yaml") }),
      mentions: "cannot read",
    },
    {
      what: "an unknown key (a typo of hostname)",
      setup: (cwd) => {
        writeFileSync(join(cwd, "service.yaml"), "hostnmae: 127.0.0.1\n");
        return {};
      },
      mentions: 'unknown key "hostnmae"',
    },
  ];
  for (const { what, setup, mentions } of invalid) {
    test(`${what}: loadConfig with strict throws a ConfigError naming the file and the error`, () => {
      const cwd = tempDir("service-strict-");
      const env = setup(cwd);
      expect(() => loadConfig({ cwd, env, strict: true })).toThrow(ConfigError);
      try {
        loadConfig({ cwd, env, strict: true });
      } catch (error) {
        expect((error as Error).message).toContain(join(cwd, "service.yaml"));
        expect((error as Error).message).toContain(mentions);
        expect((error as Error).message).not.toContain("\n");
      }
      // Without strict mode the spec's fallback stays: env and defaults.
      expect(loadConfig({ cwd, env: { ...env, SERVICE_STRICT_CONFIG: "0" } }).port).toBe(3141);
    });
  }

  test("no config file at all is fine in strict mode: env and defaults apply", () => {
    const cwd = tempDir("service-strict-");
    expect(loadConfig({ cwd, env: {}, strict: true }).port).toBe(3141);
  });

  test("SERVICE_STRICT_CONFIG=maybe stops the start naming the variable (never a silent non-strict start)", async () => {
    const cwd = tempDir("service-strict-");
    const result = await runCli([], {
      cwd,
      env: { SERVICE_STRICT_CONFIG: "maybe", SERVICE_SECRET: SECRET, SERVICE_PORT: "0" },
      timeoutMs: 20_000,
    });
    expect(result.code).toBe(1);
    const lines = nonEmptyLines(result.stdout + result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("SERVICE_STRICT_CONFIG");
    expect(lines[0]).toContain("maybe");
  });

  test("service check in strict mode says the server would refuse to start", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo.clone, "service.yaml"), ISSUE_FILE);
    const result = await runCli(["check"], { cwd: repo.clone, env: { SERVICE_STRICT_CONFIG: "1" } });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/not valid YAML.*refuse to start \(strict mode\)/);
  });
});

describe("strict mode keeps the last good configuration after a bad edit", () => {
  test("an invalid edit, an unknown key and a deleted file keep the last good run script, with a warning on every POST", async () => {
    const repo = makeRepo();
    const cwd = tempDir("service-strict-");
    const file = join(cwd, "service.yaml");
    writeFileSync(file, `repoPath: ${repo.clone}\nrunScript: echo last-good\n`);
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET }, ["--strict"]);
    const deploy = async () => (await post(server.url, { secret: SECRET })).text();
    expect(await deploy()).toContain("last-good");
    for (const [edit, why] of [
      [() => writeFileSync(file, `repoPath: ${repo.clone}\nrunScript: [unclosed\n`), "is not valid YAML"],
      [
        () => writeFileSync(file, `repoPath: ${repo.clone}\nrunScript: echo typo-edit\nrun_scirpt: x\n`),
        'unknown key "run_scirpt"',
      ],
      [() => rmSync(file), `${file} is gone`],
    ] as const) {
      edit();
      for (let i = 0; i < 2; i++) {
        const text = await deploy();
        expect(text).toContain("last-good");
        expect(text).toMatch(/\[config\] .*keeping the last good configuration \(strict mode\)/);
        expect(text).toContain(why);
        expect(text).toContain("[done] ok=true");
      }
    }
    writeFileSync(file, `repoPath: ${repo.clone}\nrunScript: echo fixed\n`);
    const fixed = await deploy();
    expect(fixed).toContain("fixed");
    expect(fixed).not.toContain("keeping the last good");
  });
});
