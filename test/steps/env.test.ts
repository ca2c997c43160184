/**
 * The deploy's environment (docs/security.md "The deploy's environment"): `env` and `envFile` reach the run
 * script and the health check; the values read from files are secrets, kept out of the stream, the logs, the
 * JSON result, notifications and the API; a malformed file refuses the deploy; apps do not see each other's
 * variables; unsafe files are warned about; `service check` shows names only.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseDotenv } from "../../src/config/env.ts";
import { lastLine, makeRepo, post, runCli, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { deployIdOf, logDirOf, stemOf } from "../_support/ops-helpers.ts";
import { fakeApi } from "../_support/outbound-fixtures.ts";

const DB_URL = "postgres://app:db-password-0123@db/app";
const API_KEY = "api-key-0123456789abcdef";
const QUOTED = "two words # not a comment";

/** A file of mode 0600 (the safe mode) in `dir`. */
function privateFile(dir: string, name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/** A service directory: `yaml` is its config; a script that prints the variables named. */
function service(yaml: (dir: string) => string, names: string[]) {
  const repo = makeRepo();
  const dir = tempDir("service-dir-");
  const script = join(dir, "print.sh");
  writeFileSync(script, names.map((name) => `echo "${name}=$${name}"`).join("\n"));
  writeFileSync(join(dir, "service.yaml"), `repoPath: ${repo.clone}\nrunScript: sh ${script}\n${yaml(dir)}`);
  return { repo, dir };
}

/** The stems of both log files of the deploy `id`, read. */
const logsOf = (dir: string, id: string) => {
  const stem = stemOf(dir, id);
  return [`${stem}.log`, `${stem}.json`].map((name) => readFileSync(join(logDirOf(dir), name), "utf8"));
};

describe(`env and envFile reach the script and the health check (docs/security.md "The deploy's environment")`, () => {
  test("literal values are shown; values from files are *** in the stream, JSON result, log files, notifications and the API", async () => {
    const api = fakeApi([201]);
    const { dir } = service(
      (dir) => {
        const db = privateFile(dir, "db.secret", `${DB_URL}\n`);
        const envFile = privateFile(
          dir,
          "app.env",
          `# the app's secrets\nexport API_KEY=${API_KEY}\nQUOTED="${QUOTED}" # a comment\n`,
        );
        const health = join(dir, "health.sh");
        writeFileSync(health, `test "$DB_URL" = "${DB_URL}" && test "$API_KEY" = "${API_KEY}" && test "$MODE" = live`);
        return [
          `env: { MODE: live, DB_URL: { file: ${db} } }`,
          `envFile: ${envFile}`,
          `healthCheck: sh ${health}`,
          `notify: [{ url: "${api.url}/notify", on: [succeeded] }]`,
        ].join("\n");
      },
      ["MODE", "DB_URL", "API_KEY", "QUOTED"],
    );
    const { server, admin } = await startAdmin(dir);
    await using _ = server;
    const streamed = await (await post(server.url, { secret: SECRET })).text();
    expect(streamed).toContain("MODE=live\nDB_URL=***\nAPI_KEY=***\nQUOTED=***\n");
    expect(streamed).toContain("[health] healthy after 1 attempt");
    expect(lastLine(streamed)).toBe("[done] ok=true exitCode=0");
    const json = await (await post(`${server.url}/?format=json`, { secret: SECRET })).text();
    expect(JSON.parse(json).run.stdout).toBe("MODE=live\nDB_URL=***\nAPI_KEY=***\nQUOTED=***\n");
    const id = deployIdOf(streamed);
    const notified = await waitFor(() => api.seen.find((seen) => seen.json().id === id), "the notification");
    const auth = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
    const fromApi = [
      await (await fetch(`${admin}/api/deploys/${id}`, auth)).text(),
      await (await fetch(`${admin}/api/deploys/${id}/log`, auth)).text(),
    ];
    expect(fromApi[1]).toContain("DB_URL=***");
    for (const text of [streamed, json, notified.body, ...fromApi, ...logsOf(dir, id)])
      for (const value of [DB_URL, "db-password-0123", API_KEY, QUOTED]) expect(text).not.toContain(value);
  });

  test("apps do not see each other's variables; an app's env replaces the top level's, an app without one inherits it", async () => {
    const web = makeRepo();
    const docs = makeRepo();
    const dir = tempDir("service-dir-");
    const script = join(dir, "print.sh");
    writeFileSync(script, `env | grep -E '^(SHARED|WEB_|DOCS_)' | sort`);
    const webEnv = privateFile(dir, "web.env", "WEB_KEY=web-secret-0123456789\n");
    const app = (name: string, repo: string, extra: string) =>
      `  - { name: ${name}, host: ${name}.example.com, path: /, repoPath: ${repo}, runScript: sh ${script}${extra} }`;
    writeFileSync(
      join(dir, "service.yaml"),
      [
        "env: { SHARED: top-level }",
        "apps:",
        app("web", web.clone, `, envFile: ${webEnv}, env: { WEB_MODE: live }`),
        app("docs", docs.clone, ""),
      ].join("\n"),
    );
    const ofWeb = await runCli(["deploy", "--app", "web"], { cwd: dir });
    expect(ofWeb.stdout).toContain("WEB_KEY=***\nWEB_MODE=live\n");
    expect(ofWeb.stdout).not.toContain("SHARED");
    const ofDocs = await runCli(["deploy", "--app", "docs"], { cwd: dir });
    expect(ofDocs.stdout).toContain("SHARED=top-level\n");
    expect(ofDocs.stdout).not.toContain("WEB_");
  });

  test("SERVICE_SECRET, SERVICE_ADMIN_TOKEN and the status token never reach a script; env may not set a SERVICE_ name", async () => {
    const { dir } = service(
      () => "env: { APP_MODE: live }\n",
      ["SERVICE_SECRET", "SERVICE_ADMIN_TOKEN", "SERVICE_STATUS_TOKEN", "APP_MODE"],
    );
    const { stdout } = await runCli(["deploy"], {
      cwd: dir,
      env: {
        SERVICE_SECRET: SECRET,
        SERVICE_ADMIN_TOKEN: ADMIN_TOKEN,
        SERVICE_STATUS_TOKEN: "status-token-0123456789",
      },
    });
    expect(stdout).toContain("SERVICE_SECRET=\nSERVICE_ADMIN_TOKEN=\nSERVICE_STATUS_TOKEN=\nAPP_MODE=live\n");
    writeFileSync(join(dir, "service.yaml"), "env: { SERVICE_SECRET: mine }\n");
    const check = await runCli(["check"], { cwd: dir });
    expect(check.code).toBe(1);
    expect(check.stderr + check.stdout).toContain("SERVICE_SECRET: names starting with SERVICE_ are the service's own");
  });
});

describe(`a file the deploy cannot use refuses it (docs/security.md "The deploy's environment")`, () => {
  test("a malformed envFile line: the deploy is refused before the pull, naming the file and the line; check says the same", async () => {
    const { repo, dir } = service(
      (dir) => `envFile: ${privateFile(dir, "app.env", "GOOD=value-0123\n# fine\nthis is not a variable\n")}\n`,
      ["GOOD"],
    );
    const before = repo.head();
    repo.push({ "new.txt": "1\n" });
    const { code, stdout } = await runCli(["deploy"], { cwd: dir });
    expect(code).toBe(1);
    expect(stdout).toContain(
      `[config] the deploy's variables cannot be read: ${join(dir, "app.env")} line 3: expected KEY=value; nothing runs`,
    );
    expect(stdout).not.toContain("GOOD=");
    expect(lastLine(stdout)).toBe("[done] ok=false exitCode=null");
    expect(repo.head()).toBe(before);
    const check = await runCli(["check"], { cwd: dir });
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`${join(dir, "app.env")} line 3: expected KEY=value: every deploy would be refused`);
    expect(check.stdout).not.toContain("value-0123");
  });

  test("a missing { file } refuses the deploy, naming the file and the variable", async () => {
    const { dir } = service((dir) => `env: { DB_URL: { file: ${join(dir, "missing")} } }\n`, ["DB_URL"]);
    const { code, stdout } = await runCli(["deploy"], { cwd: dir });
    expect(code).toBe(1);
    expect(stdout).toContain(`cannot read ${join(dir, "missing")} (env DB_URL): ENOENT; nothing runs`);
  });

  test("dotenv: export, quotes, escapes and comments are read; any other line is an error naming it", () => {
    const text = [
      "# comment",
      "",
      "export A=1",
      "B = spaced # comment",
      `C="line\\nnext \\"q\\" $HOME"`,
      "D='single # kept'",
      "E=",
      "not a line",
      'F="unterminated',
      "G='x' junk",
      "1H=x",
      "SERVICE_SECRET=x",
    ].join("\n");
    expect(parseDotenv(text, "f")).toEqual({
      vars: { A: "1", B: "spaced", C: 'line\nnext "q" $HOME', D: "single # kept", E: "" },
      problems: [
        "f line 8: expected KEY=value",
        "f line 9: the value of F is not closed by its quote, or is followed by more than a comment",
        "f line 10: the value of G is not closed by its quote, or is followed by more than a comment",
        'f line 11: "1H" is not a variable name (letters, digits and _, not first a digit)',
        "f line 12: SERVICE_SECRET: names starting with SERVICE_ are the service's own",
      ],
    });
  });
});

describe(`files readable by others or inside the repository are warned about (docs/security.md "The deploy's environment")`, () => {
  test("at start and by check, which shows the names and never the values", async () => {
    const { repo, dir } = service(() => "", []);
    const open = join(dir, "open.env");
    writeFileSync(open, `API_KEY=${API_KEY}\n`);
    chmodSync(open, 0o644);
    const inRepo = privateFile(repo.clone, "db.secret", DB_URL);
    writeFileSync(
      join(dir, "service.yaml"),
      `repoPath: ${repo.clone}\nrunScript: "true"\nenvFile: ${open}\nenv: { DB_URL: { file: ${inRepo} }, MODE: staging-7f3 }\n`,
    );
    const check = await runCli(["check"], { cwd: dir });
    expect(check.code).toBe(0);
    expect(check.stdout).toContain(
      `warning: ${open} (envFile) can be read by other users (mode 0644): run chmod 600 ${open}`,
    );
    expect(check.stdout).toContain(`warning: ${inRepo} (env DB_URL) is inside the repository ${repo.clone}`);
    expect(check.stdout).toMatch(/env\s+API_KEY \(from .*open\.env\), DB_URL \(from .*db\.secret\), MODE/);
    for (const value of [API_KEY, DB_URL, "staging-7f3"]) expect(check.stdout).not.toContain(value);
    const { server } = await startAdmin(dir);
    await using _ = server;
    await waitFor(() => server.stdout.text.includes("Auth: required"), "the banner");
    const said = server.stdout.text + server.stderr.text;
    expect(said).toContain(`${open} (envFile) can be read by other users (mode 0644)`);
    expect(said).toContain(`${inRepo} (env DB_URL) is inside the repository`);
  });
});
