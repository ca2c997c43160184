import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createConsola } from "consola";
import { loadConfig } from "../../src/config/load.ts";
import { createServiceServer, ensureWebhookSecret } from "../../src/index.ts";
import { generateSecret, SECRET_FILE } from "../../src/config/secret.ts";
import { secretsEqual, verifyRequestSecret } from "../../src/http/signature.ts";
import { lastLine, makeRepo, post, runCli, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";
import { startLibraryServer } from "../_support/library.ts";

// bunfig.toml's [test] timeout is not applied by this Bun (5 s default): real servers and deploys need more room.
setDefaultTimeout(30_000);

/** The real CLI server under `umask 000`: the file mode of `.service.secret` must not depend on the umask it inherits. */
const startUnderUmask000 = (cwd: string, env: Record<string, string | undefined> = {}) =>
  startServer(cwd, env, [], { umask: "000" });

/** Deploys with `secret` and returns the last line, or the status when it is not 200. */
async function deployWith(url: string, secret: string): Promise<string | number> {
  const res = await post(url, { secret });
  const text = await res.text();
  return res.status === 200 ? lastLine(text) : res.status;
}

const OK = "[done] ok=true exitCode=0";
const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe('Generated secret (docs/configuration.md "Secret")', () => {
  test("the first start without a secret generates one: printed once on stdout, stored in .service.secret (0600 under umask 000), 256 bits, and it deploys", async () => {
    const repo = makeRepo();
    await using server = await startUnderUmask000(repo.clone, { SERVICE_RUN_SCRIPT: "true" });
    const file = join(repo.clone, SECRET_FILE);
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const secret = readFileSync(file, "utf8").trim();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret, "base64url").length).toBe(32);
    expect(occurrences(server.stdout.text, secret)).toBe(1);
    expect(server.stderr.text).not.toContain(secret);

    expect(await deployWith(server.url, secret)).toBe(OK);
    expect(await deployWith(server.url, "not-the-secret")).toBe(401);
  });

  test("the second start reuses the stored secret and does not print it", async () => {
    const repo = makeRepo();
    const first = await startUnderUmask000(repo.clone, { SERVICE_RUN_SCRIPT: "true" });
    await first.stop();
    const file = join(repo.clone, SECRET_FILE);
    const secret = readFileSync(file, "utf8").trim();

    await using second = await startUnderUmask000(repo.clone, { SERVICE_RUN_SCRIPT: "true" });
    expect(second.stdout.text).not.toContain(secret);
    expect(second.stderr.text).not.toContain(secret);
    expect(readFileSync(file, "utf8").trim()).toBe(secret);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await deployWith(second.url, secret)).toBe(OK);
  });

  test("an empty .service.secret stops the start with one clear message and a non-zero exit", async () => {
    for (const content of ["", "\n", "   \n"]) {
      const cwd = tempDir("service-secret-");
      writeFileSync(join(cwd, SECRET_FILE), content);
      const result = await runCli([], { cwd, env: { SERVICE_PORT: "0" }, timeoutMs: 20_000 });
      const output = result.stdout + result.stderr;
      expect(result.code).not.toBe(0);
      expect(result.code).not.toBeNull();
      expect(output).not.toContain("listening on");
      expect(output).toContain(SECRET_FILE);
      expect(output).toContain("empty");
      expect(output).not.toContain("    at ");
      expect(output.split("\n").filter((line) => line.trim() !== "").length).toBe(1);
      // The bad file is left for the user to fix, not silently replaced.
      expect(readFileSync(join(cwd, SECRET_FILE), "utf8")).toBe(content);
    }
  });
});

describe("Secret sources (SERVICE_SECRET, or the file key secret, else generated)", () => {
  test("SERVICE_SECRET wins over the secret key, which wins over .service.secret", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo.clone, "service.yaml"), 'secret: from-the-file-key\nrun_script: "true"\n');
    writeFileSync(join(repo.clone, SECRET_FILE), "from-the-secret-file\n");

    {
      await using withEnv = await startUnderUmask000(repo.clone, { SERVICE_SECRET: "from-the-env" });
      expect(await deployWith(withEnv.url, "from-the-env")).toBe(OK);
      expect(await deployWith(withEnv.url, "from-the-file-key")).toBe(401);
      expect(await deployWith(withEnv.url, "from-the-secret-file")).toBe(401);
    }

    {
      await using withKey = await startUnderUmask000(repo.clone);
      expect(await deployWith(withKey.url, "from-the-file-key")).toBe(OK);
      expect(await deployWith(withKey.url, "from-the-env")).toBe(401);
      expect(await deployWith(withKey.url, "from-the-secret-file")).toBe(401);
    }

    writeFileSync(join(repo.clone, "service.yaml"), 'run_script: "true"\n');
    await using withFile = await startUnderUmask000(repo.clone);
    expect(withFile.stdout.text).not.toContain("from-the-secret-file");
    expect(await deployWith(withFile.url, "from-the-secret-file")).toBe(OK);
    expect(await deployWith(withFile.url, "from-the-file-key")).toBe(401);
  });

  test("with a configured secret (SERVICE_SECRET or the secret key) no .service.secret is written and nothing is printed", async () => {
    const repo = makeRepo();
    {
      await using viaEnv = await startUnderUmask000(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "true" });
      expect(existsSync(join(repo.clone, SECRET_FILE))).toBe(false);
      expect(viaEnv.stdout.text).not.toContain(SECRET);
      expect(viaEnv.stdout.text).not.toContain(SECRET_FILE);
    }

    writeFileSync(join(repo.clone, "service.yaml"), `secret: ${SECRET}\nrun_script: "true"\n`);
    await using viaKey = await startUnderUmask000(repo.clone);
    expect(existsSync(join(repo.clone, SECRET_FILE))).toBe(false);
    expect(viaKey.stdout.text).not.toContain(SECRET);
    expect(await deployWith(viaKey.url, SECRET)).toBe(OK);
  });

  test("a blank configured secret (whitespace only) stops the start with a clear message instead of locking every request out", async () => {
    const cwd = tempDir("service-secret-");
    const result = await runCli([], { cwd, env: { SERVICE_PORT: "0", SERVICE_SECRET: "   " }, timeoutMs: 10_000 });
    const output = result.stdout + result.stderr;
    expect(output).not.toContain("listening on");
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(output).toContain("secret");
    expect(output).toContain("blank");
    expect(output).not.toContain("    at ");
    expect(existsSync(join(cwd, SECRET_FILE))).toBe(false);
  });

  test("a configured secret with surrounding whitespace (a YAML block scalar) is matched without it", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo.clone, "service.yaml"), `secret: |\n  ${SECRET}\nrun_script: "true"\n`);
    await using server = await startUnderUmask000(repo.clone);
    expect(await deployWith(server.url, SECRET)).toBe(OK);
  });
});

describe('ensureWebhookSecret (docs/library.md "Library")', () => {
  test("sets config.secret and returns generated: true only the first time", () => {
    const cwd = tempDir("service-secret-");
    const first = loadConfig({ cwd, env: {} });
    const made = ensureWebhookSecret(first, cwd);
    expect(made.generated).toBe(true);
    expect(first.secret).toBe(made.secret);
    expect(made.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(join(cwd, SECRET_FILE), "utf8").trim()).toBe(made.secret);

    const again = ensureWebhookSecret(first, cwd);
    expect(again.generated).toBe(false);
    expect(again.secret).toBe(made.secret);

    const fresh = loadConfig({ cwd, env: {} });
    const reused = ensureWebhookSecret(fresh, cwd);
    expect(reused.generated).toBe(false);
    expect(reused.source).toBe("file");
    expect(fresh.secret).toBe(made.secret);
  });

  test("uses the working directory of the process when no directory is given", () => {
    const cwd = tempDir("service-secret-");
    const previous = process.cwd();
    process.chdir(cwd);
    let result: ReturnType<typeof ensureWebhookSecret>;
    try {
      result = ensureWebhookSecret({});
    } finally {
      process.chdir(previous);
    }
    expect(result.generated).toBe(true);
    expect(readFileSync(join(cwd, SECRET_FILE), "utf8").trim()).toBe(result.secret);
  });

  test("a configured secret is kept as it is and no file is written", () => {
    const cwd = tempDir("service-secret-");
    const config = loadConfig({ cwd, env: { SERVICE_SECRET: "configured" } });
    const result = ensureWebhookSecret(config, cwd);
    expect(result).toMatchObject({ secret: "configured", source: "config", generated: false });
    expect(config.secret).toBe("configured");
    expect(existsSync(join(cwd, SECRET_FILE))).toBe(false);
  });

  test("the file is written with mode 0600 whatever the process umask", () => {
    const cwd = tempDir("service-secret-");
    const previous = process.umask(0o000);
    try {
      ensureWebhookSecret({}, cwd);
    } finally {
      process.umask(previous);
    }
    expect(statSync(join(cwd, SECRET_FILE)).mode & 0o777).toBe(0o600);
  });

  test("an empty .service.secret throws a message naming the file", () => {
    const cwd = tempDir("service-secret-");
    writeFileSync(join(cwd, SECRET_FILE), "\n");
    expect(() => ensureWebhookSecret({}, cwd)).toThrow(/\.service\.secret.*empty/);
  });

  test("a secret file that cannot be written or read throws a message naming .service.secret and leaves nothing behind", () => {
    const missing = join(tempDir("service-secret-"), "gone");
    expect(() => ensureWebhookSecret({}, missing)).toThrow(
      `cannot write the secret file ${join(missing, SECRET_FILE)}`,
    );
    const blocked = tempDir("service-secret-");
    mkdirSync(join(blocked, SECRET_FILE));
    expect(() => ensureWebhookSecret({}, blocked)).toThrow(`cannot read the secret file ${join(blocked, SECRET_FILE)}`);
    expect(readdirSync(blocked)).toEqual([SECRET_FILE]);
  });

  test("generated secrets are 256-bit base64url values and differ every time", () => {
    const values = new Set(Array.from({ length: 20 }, () => generateSecret()));
    expect(values.size).toBe(20);
    for (const value of values) expect(Buffer.from(value, "base64url").length).toBe(32);
  });

  test("createServiceServer(config).start() without a secret generates and persists one in its working directory", async () => {
    const repo = makeRepo();
    const cwd = tempDir("service-secret-");
    const messages: string[] = [];
    const logger = createConsola({ reporters: [{ log: (entry) => messages.push(String(entry.args[0])) }] });
    const config = loadConfig({
      cwd,
      env: { SERVICE_PORT: "0", SERVICE_REPO_PATH: repo.clone, SERVICE_RUN_SCRIPT: "true" },
      logger,
    });
    await using server = await startLibraryServer(config, { cwd, logger });
    expect(server.listening).toBe(true);
    const stored = readFileSync(join(cwd, SECRET_FILE), "utf8").trim();
    expect(config.secret).toBe(stored);
    expect(await deployWith(server.url!, stored)).toBe(OK);
    expect(await deployWith(server.url!, "wrong")).toBe(401);
    await server.stop();
    await server.idle();
    expect(server.listening).toBe(false);
  });
});

describe('Request authentication (docs/configuration.md "Secret")', () => {
  const secret = "s3cret-value";
  const cases: { name: string; headers: Record<string, string>; ok: boolean }[] = [
    { name: "X-Service-Secret with the secret", headers: { "x-service-secret": secret }, ok: true },
    { name: "Authorization: Bearer with the secret", headers: { authorization: `Bearer ${secret}` }, ok: true },
    { name: "Authorization: bearer (lower-case scheme)", headers: { authorization: `bearer ${secret}` }, ok: true },
    { name: "Authorization: BEARER (upper-case scheme)", headers: { authorization: `BEARER ${secret}` }, ok: true },
    {
      name: "both headers, both right",
      headers: { "x-service-secret": secret, authorization: `Bearer ${secret}` },
      ok: true,
    },
    {
      name: "both headers, X-Service-Secret wrong",
      headers: { "x-service-secret": "wrong", authorization: `Bearer ${secret}` },
      ok: false,
    },
    {
      name: "both headers, Bearer wrong",
      headers: { "x-service-secret": secret, authorization: "Bearer wrong" },
      ok: false,
    },
    { name: "no header", headers: {}, ok: false },
    { name: "empty X-Service-Secret", headers: { "x-service-secret": "" }, ok: false },
    { name: "Bearer with no value", headers: { authorization: "Bearer" }, ok: false },
    { name: "Bearer with a blank value", headers: { authorization: "Bearer   " }, ok: false },
    { name: "Authorization without a scheme", headers: { authorization: secret }, ok: false },
    { name: "Authorization: Basic with the secret", headers: { authorization: `Basic ${secret}` }, ok: false },
    { name: "a shorter secret", headers: { "x-service-secret": secret.slice(0, -1) }, ok: false },
    { name: "a longer secret", headers: { "x-service-secret": `${secret}x` }, ok: false },
    { name: "a very long value", headers: { "x-service-secret": "x".repeat(10_000) }, ok: false },
    { name: "different case", headers: { "x-service-secret": secret.toUpperCase() }, ok: false },
  ];
  for (const { name, headers, ok } of cases) {
    test(`verifyRequestSecret: ${name} → ${ok}`, () => {
      expect(verifyRequestSecret(new Headers(headers), secret)).toBe(ok);
    });
  }

  test("verifyRequestSecret: an empty expected secret matches nothing, not even an empty header", () => {
    expect(verifyRequestSecret(new Headers({ "x-service-secret": "" }), "")).toBe(false);
    expect(verifyRequestSecret(new Headers({ authorization: "Bearer " }), "")).toBe(false);
    expect(verifyRequestSecret(new Headers({ "x-service-secret": "anything" }), "")).toBe(false);
  });

  test("secretsEqual: equal strings are equal; different lengths and empty values compare false without throwing", () => {
    expect(secretsEqual("abc", "abc")).toBe(true);
    expect(secretsEqual("abc", "abcd")).toBe(false);
    expect(secretsEqual("abcd", "abc")).toBe(false);
    expect(secretsEqual("", "abc")).toBe(false);
    expect(secretsEqual("abc", "")).toBe(false);
    expect(secretsEqual("é", "e")).toBe(false);
    expect(secretsEqual("x".repeat(100_000), "x")).toBe(false);
  });
});

describe("Generated secret directory (in the working directory)", () => {
  test(".service.secret is written in the working directory, not in repoPath", async () => {
    const repo = makeRepo();
    const cwd = tempDir("service-secret-");
    await using _server = await startUnderUmask000(cwd, { SERVICE_REPO_PATH: repo.clone, SERVICE_RUN_SCRIPT: "true" });
    expect(existsSync(join(cwd, SECRET_FILE))).toBe(true);
    expect(existsSync(join(repo.clone, SECRET_FILE))).toBe(false);
  });
});

describe("Weak secrets: under 4 characters refused, under 16 warned about", () => {
  const appsYaml = (repoPath: string, secret?: string) =>
    [
      "apps:",
      "  - name: one",
      "    host: localhost",
      "    path: /one",
      `    repoPath: ${repoPath}`,
      "    runScript: 'true'",
      ...(secret ? [`    secret: ${JSON.stringify(secret)}`] : []),
      "",
    ].join("\n");

  test("a secret of 1 to 3 characters stops the start with one line naming where it was set (SERVICE_SECRET, the secret key, an app's secret, .service.secret); check reports it once, as a problem", async () => {
    const cases: {
      what: string;
      files: (repoPath: string) => Record<string, string>;
      env: Record<string, string>;
      names: string;
    }[] = [
      { what: "SERVICE_SECRET=a", files: () => ({}), env: { SERVICE_SECRET: "a" }, names: "SERVICE_SECRET" },
      { what: "secret key of 3", files: () => ({ "service.yaml": "secret: ab1\n" }), env: {}, names: "the secret key" },
      {
        what: "app secret of 2",
        files: (repoPath) => ({ "service.yaml": appsYaml(repoPath, "ab") }),
        env: {},
        names: 'apps entry 1 ("one")',
      },
      { what: ".service.secret of 3", files: () => ({ [SECRET_FILE]: "xy9\n" }), env: {}, names: SECRET_FILE },
    ];
    for (const { what, files, env, names } of cases) {
      const repo = makeRepo();
      for (const [name, text] of Object.entries(files(repo.clone)))
        writeFileSync(join(repo.clone, name), text, { mode: 0o600 });
      const start = await runCli([], { cwd: repo.clone, env: { SERVICE_PORT: "0", ...env }, timeoutMs: 15_000 });
      const message = start.stderr.trim();
      expect({
        what,
        code: start.code === 0,
        listening: start.stdout.includes("listening on"),
        lines: message.split("\n").length,
      }).toEqual({ what, code: false, listening: false, lines: 1 });
      expect(message).toContain(names);
      expect(message).toMatch(/is only [1-3] characters?: a secret needs at least 4/);
    }
    // check calls it a problem (the start would be refused), once, not also a warning.
    const check = await runCli(["check"], { cwd: makeRepo().clone, env: { SERVICE_SECRET: "ab1" } });
    expect(check.code).toBe(1);
    expect(check.stdout.match(/is only 3 characters/g)).toHaveLength(1);
    expect(check.stdout).not.toContain("warning:");
  });

  test("ensureWebhookSecret and createServiceServer(config).start() refuse a configured secret under 4 characters, naming the key", async () => {
    expect(() => ensureWebhookSecret({ secret: "ab1" }, tempDir())).toThrow(
      /SERVICE_SECRET or the secret key\) is only 3 characters/,
    );
    const repo = makeRepo();
    const cwd = tempDir("service-secret-");
    const logger = createConsola({ reporters: [{ log: () => {} }] });
    const config = loadConfig({
      cwd,
      env: { SERVICE_PORT: "0", SERVICE_REPO_PATH: repo.clone, SERVICE_RUN_SCRIPT: "true" },
      logger,
    });
    config.secret = "ab";
    const server = createServiceServer(config, { cwd, logger });
    await expect(server.start()).rejects.toThrow(/is only 2 characters: a secret needs at least 4/);
    expect(server.listening).toBe(false);
  });

  test("a secret of 4 to 15 characters: the server starts, warns at start (its length, never its value) and deploys with it; check warns and still exits 0", async () => {
    const repo = makeRepo();
    const weak = "Qz9-x7w";
    {
      await using server = await startServer(repo.clone, { SERVICE_SECRET: weak, SERVICE_RUN_SCRIPT: "true" });
      await waitFor(
        () => server.stderr.text.includes("the webhook secret is only 7 characters"),
        "the weak-secret warning",
      );
      expect(`${server.stdout.text}${server.stderr.text}`).not.toContain(weak);
      expect(await deployWith(server.url, weak)).toBe(OK);
    }
    const check = await runCli(["check"], { cwd: repo.clone, env: { SERVICE_SECRET: weak } });
    expect(check.code).toBe(0);
    expect(check.stdout).toContain(
      "warning: the webhook secret is only 7 characters: a short secret can be guessed; use 16 or more",
    );
    expect(check.stdout).not.toContain(weak);
    const strong = await runCli(["check"], { cwd: repo.clone, env: { SERVICE_SECRET: "sixteen-chars-ok" } });
    expect(strong.code).toBe(0);
    expect(strong.stdout).not.toContain("warning:");
  });

  test("an app's secret under 16 characters is warned about by name, at start and by check", async () => {
    const repo = makeRepo();
    const cwd = tempDir("service-apps-");
    writeFileSync(join(cwd, "service.yaml"), appsYaml(repo.clone, "app-secret-9"));
    {
      await using server = await startServer(cwd);
      await waitFor(
        () => server.stderr.text.includes('the secret of app "one" is only 12 characters'),
        "the app's weak-secret warning",
      );
    }
    const check = await runCli(["check"], { cwd });
    expect(check.stdout).toContain('warning: the secret of app "one" is only 12 characters');
    expect(check.stdout).not.toContain("app-secret-9");
  });
});
