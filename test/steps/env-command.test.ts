/**
 * `envCommand` (docs/security.md "Secrets"): a command of the service's own config prints the deploy's secrets
 * (dotenv or JSON); it runs at each deploy before anything live moves, in the directory of the config file,
 * without the service's SERVICE_* variables; its values reach the scripts as envFile's do and are kept out of
 * every output; a command that fails refuses the deploy before the pull; a rollback inside the deploy reuses its
 * values, `service rollback` runs it again; `service check` runs it and lists names only.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastLine, makeRepo, runCli, SECRET, tempDir } from "../_support/helpers.ts";

const API_KEY = "cmd-api-key-0123456789";
const DB_URL = "postgres://app:cmd-db-pass-0123@db/app";

/**
 * A service directory whose config sets `envCommand: sh vars.sh` (relative: it runs in the config's directory);
 * vars.sh is `command` and counts its runs in `runs`; the run script prints `names`.
 */
function service(command: string, names: string[], extra = "") {
  const repo = makeRepo();
  const dir = tempDir("service-dir-");
  writeFileSync(join(dir, "vars.sh"), `echo run >> runs\n${command}`);
  const script = join(dir, "print.sh");
  writeFileSync(script, names.map((name) => `echo "${name}=$${name}"`).join("\n"));
  writeFileSync(
    join(dir, "service.yaml"),
    `repoPath: ${repo.clone}\nrunScript: sh ${script}\nenvCommand: sh vars.sh\n${extra}`,
  );
  const runs = () =>
    existsSync(join(dir, "runs")) ? readFileSync(join(dir, "runs"), "utf8").split("\n").length - 1 : 0;
  return { repo, dir, runs };
}

describe('envCommand gives the deploy its variables (docs/security.md "Secrets")', () => {
  test("dotenv output reaches the run script and the health check, as *** in the output; the command runs in the config's directory without SERVICE_*", async () => {
    const { dir } = service(
      `env > seen.env\nprintf 'API_KEY=%s\\nDB_URL="%s"\\n' '${API_KEY}' '${DB_URL}'`,
      ["API_KEY", "DB_URL", "MODE"],
      `env: { MODE: live }\nhealthCheck: test "$API_KEY" = "${API_KEY}"\n`,
    );
    const { code, stdout } = await runCli(["deploy"], { cwd: dir, env: { SERVICE_SECRET: SECRET } });
    expect(stdout).toContain("API_KEY=***\nDB_URL=***\nMODE=live\n");
    expect(stdout).toContain("[health] healthy after 1 attempt");
    expect(code).toBe(0);
    for (const value of [API_KEY, DB_URL, "cmd-db-pass-0123"]) expect(stdout).not.toContain(value);
    const seen = readFileSync(join(dir, "seen.env"), "utf8");
    expect(seen).toContain("PATH=");
    expect(seen).not.toMatch(/^SERVICE_/m);
  });

  test("json output: an object of strings; a multi-line value is kept out line by line", async () => {
    const pem = "-----BEGIN KEY-----\nAAAAB3NzaC1yc2EAAAADAQAB\n-----END KEY-----";
    const { dir } = service(
      `printf '%s' '${JSON.stringify({ API_KEY, PORT: 8080, KEY: pem })}'`,
      ["API_KEY", "PORT", "KEY"],
      "envCommandFormat: json\n",
    );
    const { code, stdout } = await runCli(["deploy"], { cwd: dir });
    expect(code).toBe(0);
    expect(stdout).toContain("API_KEY=***\nPORT=***\nKEY=***\n");
    for (const line of [API_KEY, ...pem.split("\n")]) expect(stdout).not.toContain(line);
  });

  test("envFile's variables, then envCommand's over them, then env's over both", async () => {
    const { dir } = service("printf 'A=from-command\\nB=from-command\\n'", ["A", "B", "C"]);
    const envFile = join(dir, "app.env");
    writeFileSync(envFile, "A=from-envfile\nB=from-envfile\nC=from-envfile\n", { mode: 0o600 });
    const yaml = readFileSync(join(dir, "service.yaml"), "utf8");
    writeFileSync(join(dir, "service.yaml"), `${yaml}envFile: ${envFile}\nenv: { B: literal-b }\n`);
    const script = readFileSync(join(dir, "print.sh"), "utf8");
    writeFileSync(
      join(dir, "print.sh"),
      `${script}\ntest "$A" = from-command && test "$C" = from-envfile && test "$B" = literal-b`,
    );
    expect((await runCli(["deploy"], { cwd: dir })).code).toBe(0);
  });

  test("a value under 4 characters is named in a warning, never shown", async () => {
    const { dir } = service(`printf 'PIN=7q1\\nAPI_KEY=%s\\n' '${API_KEY}'`, ["API_KEY"]);
    const { stdout } = await runCli(["deploy"], { cwd: dir });
    expect(stdout).toContain(
      "[config] warning: envCommand: the value of PIN has 3 characters: a value under 4 characters is never redacted from deploy output",
    );
    expect(stdout).not.toContain("7q1");
  });

  test("the repository's config file cannot set envCommand: a push does not choose what runs", async () => {
    const { repo, dir } = service(`printf 'API_KEY=%s\\n' '${API_KEY}'`, ["API_KEY"]);
    const pwned = join(tempDir("service-pwned-"), "pwned");
    repo.push({ "service.yaml": `runScript: echo from-repo\nenvCommand: touch ${pwned}\n` });
    const { code, stdout } = await runCli(["deploy"], { cwd: dir });
    expect(stdout).toContain("from-repo");
    expect(code).toBe(0);
    expect(existsSync(pwned)).toBe(false);
  });
});

describe('an envCommand that fails refuses the deploy before the pull (docs/security.md "Secrets")', () => {
  const refused = async (command: string, said: string, extra = "") => {
    const { repo, dir } = service(command, ["API_KEY"], extra);
    const before = repo.head();
    repo.push({ "new.txt": "1\n" });
    const { code, stdout } = await runCli(["deploy"], { cwd: dir });
    expect(code).toBe(1);
    expect(stdout).toContain(`[config] the deploy's variables cannot be read: ${said}`);
    expect(stdout).toContain("; nothing runs\n");
    expect(stdout).not.toContain("API_KEY=");
    expect(lastLine(stdout)).toBe("[done] ok=false exitCode=null");
    expect(repo.head()).toBe(before);
    return stdout;
  };

  test("a non-zero exit: its standard error is said, with what it printed redacted", async () => {
    const stdout = await refused(
      `printf 'API_KEY=%s\\n' '${API_KEY}'\necho "vault: sealed; had ${API_KEY}" >&2\nexit 3`,
      "envCommand exited with code 3: vault: sealed; had ***",
    );
    expect(stdout).not.toContain(API_KEY);
  });

  test("a timeout (envCommandTimeoutMs)", async () => {
    await refused(
      "exec sleep 30",
      "envCommand timed out after 300 ms (envCommandTimeoutMs)",
      "envCommandTimeoutMs: 300\n",
    );
  });

  test("output past 1 MiB is stopped", async () => {
    await refused("exec yes API_KEY=xxxxxxxx", "envCommand printed more than 1048576 bytes");
  });

  test("output that does not parse, as dotenv or as JSON, names no value", async () => {
    const dotenv = await refused(
      `echo '${API_KEY} not a line'`,
      "envCommand printed what is not dotenv (its output line 1: expected KEY=value)",
    );
    expect(dotenv).not.toContain(API_KEY);
    const json = await refused(
      `echo '{"API_KEY": "${API_KEY}",'`,
      "envCommand printed what is not JSON (it does not parse)",
      "envCommandFormat: json\n",
    );
    expect(json).not.toContain(API_KEY);
    await refused(
      `echo '{"API_KEY": {"nested": "${API_KEY}"}}'`,
      "envCommand printed what is not a JSON object of strings (the value of API_KEY is not a string)",
      "envCommandFormat: json\n",
    );
    await refused(
      "echo '[1]'",
      "envCommand printed what is not a JSON object of strings (it is not an object)",
      "envCommandFormat: json\n",
    );
  });

  test("a command that cannot start", async () => {
    const { dir } = service("true", ["API_KEY"]);
    writeFileSync(
      join(dir, "service.yaml"),
      readFileSync(join(dir, "service.yaml"), "utf8").replace("sh vars.sh", "no-such-command-here"),
    );
    const { code, stdout } = await runCli(["deploy"], { cwd: dir });
    expect(code).toBe(1);
    expect(stdout).toContain('envCommand cannot start "no-such-command-here": command not found; nothing runs');
  });
});

describe('a rollback and envCommand (docs/security.md "Secrets")', () => {
  test("the automatic rollback of a failed deploy reuses the deploy's values: the command runs once", async () => {
    const { repo, dir, runs } = service(
      `printf 'API_KEY=%s\\n' '${API_KEY}'`,
      ["API_KEY"],
      "rollbackOnFailure: true\n",
    );
    const script = join(dir, "print.sh");
    writeFileSync(script, `test "$API_KEY" = "${API_KEY}" || exit 9\ntest -e fail && exit 1\necho ok`);
    repo.push({ fail: "1\n" });
    const { stdout } = await runCli(["deploy"], { cwd: dir });
    expect(stdout).toContain("[rollback]");
    expect(stdout).toContain("ok\n");
    expect(stdout).not.toContain("exit 9");
    expect(runs()).toBe(1);
  });

  test("service rollback runs the command again; when it fails the rollback is refused and nothing changes", async () => {
    const { repo, dir, runs } = service(`test -e broken && exit 4\nprintf 'API_KEY=%s\\n' '${API_KEY}'`, ["API_KEY"]);
    expect((await runCli(["deploy"], { cwd: dir })).code).toBe(0);
    const first = repo.head();
    repo.push({ "two.txt": "2\n" });
    expect((await runCli(["deploy"], { cwd: dir })).code).toBe(0);
    const second = repo.head();
    expect(second).not.toBe(first);
    writeFileSync(join(dir, "broken"), "");
    const refused = await runCli(["rollback", first], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain("envCommand exited with code 4; nothing runs");
    expect(repo.head()).toBe(second);
    expect(runs()).toBe(3);
    rmSync(join(dir, "broken"));
    const back = await runCli(["rollback", first], { cwd: dir });
    expect(back.code).toBe(0);
    expect(back.stdout).toContain("API_KEY=***");
    expect(repo.head()).toBe(first);
  });
});

describe('service check runs envCommand and lists the names it gives (docs/security.md "Secrets")', () => {
  test("names only; --no-secrets does not run it; a failing command is a problem", async () => {
    const { dir, runs } = service(
      `test -e broken && exit 4\nprintf 'API_KEY=%s\\nDB_URL=%s\\n' '${API_KEY}' '${DB_URL}'`,
      [],
    );
    const check = await runCli(["check"], { cwd: dir, env: { SERVICE_SECRET: SECRET } });
    expect(check.stdout).toContain("envCommand gives: API_KEY, DB_URL");
    expect(check.code).toBe(0);
    for (const value of [API_KEY, DB_URL, "cmd-db-pass-0123"]) expect(check.stdout).not.toContain(value);
    expect(runs()).toBe(1);
    const skipped = await runCli(["check", "--no-secrets"], { cwd: dir, env: { SERVICE_SECRET: SECRET } });
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toContain("envCommand: not run (--no-secrets)");
    expect(runs()).toBe(1);
    writeFileSync(join(dir, "broken"), "");
    const failing = await runCli(["check"], { cwd: dir, env: { SERVICE_SECRET: SECRET } });
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain("envCommand exited with code 4: every deploy would be refused");
  });
});
