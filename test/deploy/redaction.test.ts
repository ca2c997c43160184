/**
 * Secret hygiene (docs/configuration.md "Secret"): the webhook secret(s) and credentials embedded in URLs never reach the stream,
 * the JSON result or the two log files, whatever prints them; the script's environment has no secret and
 * has the deploy context; secret files are 0600, an empty one stops the start, a readable one is warned about.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  git,
  lastLine,
  makeLocalRepo,
  makeRepo,
  post,
  runCli,
  SECRET,
  startServer,
  tempDir,
} from "../_support/helpers.ts";
import { deployIdOf, logDirOf, stemOf } from "../_support/ops-helpers.ts";
import type { Repo } from "../_support/repo.ts";

/** A run script file outside the repository; run as `sh <file>` (spawned directly, no shell parsing of ours). */
function script(body: string): string {
  const file = join(tempDir("service-script-"), "run.sh");
  writeFileSync(file, `${body}\n`);
  return `sh ${file}`;
}

/** Every place a deploy's output ends up: the given texts plus both log files of deploy `id` in `cwd`. */
function everywhere(cwd: string, id: string, ...texts: string[]): string[] {
  const stem = stemOf(cwd, id);
  return [
    ...texts,
    readFileSync(join(logDirOf(cwd), `${stem}.log`), "utf8"),
    readFileSync(join(logDirOf(cwd), `${stem}.json`), "utf8"),
  ];
}

function expectAbsent(texts: string[], ...needles: string[]): void {
  for (const text of texts) for (const needle of needles) expect(text).not.toContain(needle);
}

/** A working directory for multi-app mode with one app, "one", deploying `repo`; no secret configured. */
function oneAppDir(repo: Repo): string {
  const cwd = tempDir("service-apps-");
  writeFileSync(
    join(cwd, "service.yaml"),
    [
      "apps:",
      "  - name: one",
      "    host: localhost",
      "    path: /one",
      `    repoPath: ${repo.clone}`,
      "    runScript: 'true'",
      "",
    ].join("\n"),
  );
  return cwd;
}

/** The variables a script saved with `env > file`. */
function envIn(file: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}

const idOf = (streamed: string) => /\[deploy\] ([0-9a-f-]{36}) started/.exec(streamed)![1]!;

describe("redaction of the webhook secret", () => {
  test("a secret the script prints (from an env var) shows as *** in the stream, the JSON result, the .log and the .json", async () => {
    const repo = makeRepo();
    const run = script(
      [
        'echo "the secret is $MY_SECRET_COPY"',
        'echo "on stderr: $MY_SECRET_COPY" >&2',
        'printf "no newline at the end %s" "$MY_SECRET_COPY"',
      ].join("\n"),
    );
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      MY_SECRET_COPY: SECRET,
      SERVICE_RUN_SCRIPT: run,
    });
    const streamed = await (await post(server.url, { secret: SECRET })).text();
    expect(streamed).toContain("the secret is ***\n");
    expect(streamed).toContain("on stderr: ***\n");
    expect(streamed).toContain("no newline at the end ***");
    expect(lastLine(streamed)).toBe("[done] ok=true exitCode=0");
    expectAbsent(everywhere(repo.clone, idOf(streamed), streamed), SECRET);

    const res = await post(`${server.url}/?format=json`, { secret: SECRET });
    const text = await res.text();
    const result = JSON.parse(text);
    expect(result.run.stdout).toBe("the secret is ***\nno newline at the end ***");
    expect(result.run.stderr).toBe("on stderr: ***\n");
    expectAbsent(everywhere(repo.clone, result.id, text), SECRET);
  });

  test("a 4-character secret (the shortest accepted) printed by the script is *** in the stream, the .log, the .json and the JSON result", async () => {
    const repo = makeRepo();
    // Not hex: a short secret is replaced wherever it appears, so one that can occur in an id or a commit would mangle them.
    const short = "kq7z";
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: short,
      MY_SECRET_COPY: short,
      SERVICE_RUN_SCRIPT: script('echo "the secret is $MY_SECRET_COPY"'),
    });
    const streamed = await (await post(server.url, { secret: short })).text();
    expect(streamed).toContain("the secret is ***\n");
    expect(lastLine(streamed)).toBe("[done] ok=true exitCode=0");
    expectAbsent(everywhere(repo.clone, idOf(streamed), streamed), short);
    const text = await (await post(`${server.url}/?format=json`, { secret: short })).text();
    const result = JSON.parse(text);
    expect(result.run.stdout).toBe("the secret is ***\n");
    expectAbsent(everywhere(repo.clone, result.id, text), short);
  });

  test("a secret written literally in the run script is masked in the [run] line and the recorded runScript", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: `echo ${SECRET}`,
    });
    const text = await (await post(`${server.url}/?format=json`, { secret: SECRET })).text();
    const result = JSON.parse(text);
    expect(result.run.stdout).toBe("***\n");
    expect(result.run.script).toBe("echo ***");
    const [, log, json] = everywhere(repo.clone, result.id, text);
    expect(log).toContain("[run] $ echo ***\n");
    expect(JSON.parse(json!).runScript).toBe("echo ***");
    expectAbsent(everywhere(repo.clone, result.id, text), SECRET);
  });

  test("a secret split across two writes (printf part1; sleep; printf part2) is still redacted, whatever the pause", async () => {
    const repo = makeRepo();
    const half = SECRET.length / 2;
    const run = script(
      [
        'printf "short pause: %s" "$PART1"',
        "sleep 0.05",
        'printf "%s done\\n" "$PART2"',
        'printf "long pause: %s" "$PART1"',
        // Longer than the redactor's quiet spell: the first half is released-worthy output on its own.
        "sleep 0.4",
        'printf "%s" "$PART2"',
      ].join("\n"),
    );
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      PART1: SECRET.slice(0, half),
      PART2: SECRET.slice(half),
      SERVICE_RUN_SCRIPT: run,
    });
    const streamed = await (await post(server.url, { secret: SECRET })).text();
    expect(streamed).toContain("short pause: *** done\n");
    expect(streamed).toContain("long pause: ***");
    expect(lastLine(streamed)).toBe("[done] ok=true exitCode=0");
    expectAbsent(everywhere(repo.clone, idOf(streamed), streamed), SECRET, SECRET.slice(0, half));
  });

  test("the deploy subcommand redacts the stored secret of .service.secret too", async () => {
    const repo = makeLocalRepo();
    const secret = "stored-secret-abcdef-0123456789";
    writeFileSync(join(repo, ".service.secret"), `${secret}\n`, { mode: 0o600 });
    const run = await runCli(["deploy"], { cwd: repo, env: { SERVICE_RUN_SCRIPT: "cat .service.secret" } });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("***\n");
    expectAbsent(everywhere(repo, deployIdOf(run.stdout), run.stdout, run.stderr), secret);
  });
});

describe("redaction of URL credentials", () => {
  test("a URL with user:token printed by the script is redacted to scheme://***@host", async () => {
    const repo = makeRepo();
    const run = script(
      [
        'echo "cloning https://user:token123@example.com/x"',
        'echo "mirror: ssh://deploy:hunter2pass@git.example.org/repo.git" >&2',
      ].join("\n"),
    );
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: run });
    const streamed = await (await post(server.url, { secret: SECRET })).text();
    expect(streamed).toContain("cloning https://***@example.com/x\n");
    expect(streamed).toContain("mirror: ssh://***@git.example.org/repo.git\n");
    const text = await (await post(`${server.url}/?format=json`, { secret: SECRET })).text();
    const result = JSON.parse(text);
    expect(result.run.stdout).toBe("cloning https://***@example.com/x\n");
    for (const id of [idOf(streamed), result.id])
      expectAbsent(everywhere(repo.clone, id, streamed, text), "token123", "hunter2pass");
  });

  test("git remote -v on a clone whose remote URL embeds a token: the token is nowhere (stream, .log, .json, pull stderr, error)", async () => {
    const repo = makeRepo();
    git(repo.clone, "remote", "set-url", "origin", "https://user:tok-abc-123@127.0.0.1:9/x.git");
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "git remote -v" });
    const streamed = await (await post(server.url, { secret: SECRET })).text();
    expect(streamed).toContain("origin\thttps://***@127.0.0.1:9/x.git (fetch)\n");
    expect(lastLine(streamed)).toStartWith("[done] ok=false");

    const text = await (await post(`${server.url}/?format=json`, { secret: SECRET })).text();
    const result = JSON.parse(text);
    // The pull fails (nothing listens there); that is expected, and its messages are clean too.
    expect(result.pull.success).toBe(false);
    expect(result.error).toBeString();
    expect(result.run.stdout).toContain("https://***@127.0.0.1:9/x.git (push)");
    for (const field of [result.pull.stdout, result.pull.stderr, result.error, result.run.stdout, result.run.stderr])
      expect(field).not.toContain("tok-abc-123");
    for (const id of [idOf(streamed), result.id])
      expectAbsent(everywhere(repo.clone, id, streamed, text), "tok-abc-123");
  });
});

describe("the run script's environment", () => {
  test("has no SERVICE_SECRET; has SERVICE_DEPLOY_ID, SERVICE_TRIGGER, SERVICE_REPO_PATH and SERVICE_COMMIT_BEFORE (webhook and CLI)", async () => {
    const repo = makeRepo();
    const out = join(tempDir("service-env-"), "env.txt");
    const run = script(`env > "${out}"`);
    const before = repo.head();
    const pushed = repo.push({ "new.txt": "new\n" }, "a new commit");
    {
      await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: run });
      const result = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
      expect(result.ok).toBe(true);
      const env = envIn(out);
      expect(env.SERVICE_SECRET).toBeUndefined();
      expect(Object.values(env)).not.toContain(SECRET);
      expect(env.SERVICE_DEPLOY_ID).toBe(result.id);
      expect(env.SERVICE_TRIGGER).toBe("webhook");
      expect(env.SERVICE_REPO_PATH).toBe(repo.clone);
      expect(env.SERVICE_COMMIT_BEFORE).toBe(before);
      expect(env.SERVICE_COMMIT).toBe(pushed);
    }

    const cli = await runCli(["deploy"], { cwd: repo.clone, env: { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: run } });
    expect(cli.code).toBe(0);
    const env = envIn(out);
    expect(env.SERVICE_SECRET).toBeUndefined();
    expect(env.SERVICE_DEPLOY_ID).toBe(deployIdOf(cli.stdout));
    expect(env.SERVICE_TRIGGER).toBe("cli");
    expect(env.SERVICE_REPO_PATH).toBe(repo.clone);
    expect(env.SERVICE_COMMIT_BEFORE).toBe(pushed);
  });
});

describe("multi-app mode", () => {
  test("another app's secret (configured or generated) printed by a script is redacted; the script's env names its app and holds no app secret", async () => {
    const alpha = makeRepo();
    const beta = makeRepo();
    const gamma = makeRepo();
    const cwd = tempDir("service-apps-");
    const envOut = join(tempDir("service-env-"), "env.txt");
    const betaSecret = "beta-secret-for-redaction-42";
    const alphaSecret = "alpha-secret-for-redaction-17";
    writeFileSync(
      join(cwd, "service.yaml"),
      [
        "apps:",
        "  - name: alpha",
        "    host: localhost",
        "    path: /alpha",
        `    repoPath: ${alpha.clone}`,
        `    runScript: ${script(['echo "beta says $BETA_COPY"', `echo "gamma says $(cat ${join(cwd, ".service", "secrets", "gamma.secret")})"`, `env > "${envOut}"`].join("\n"))}`,
        `    secret: ${alphaSecret}`,
        "  - name: beta",
        "    host: localhost",
        "    path: /beta",
        `    repoPath: ${beta.clone}`,
        "    runScript: 'true'",
        `    secret: ${betaSecret}`,
        // No secret: one is generated into .service/secrets/gamma.secret at the start.
        "  - name: gamma",
        "    host: localhost",
        "    path: /gamma",
        `    repoPath: ${gamma.clone}`,
        "    runScript: 'true'",
        "",
      ].join("\n"),
    );
    await using server = await startServer(cwd, { BETA_COPY: betaSecret });
    const gammaFile = join(cwd, ".service", "secrets", "gamma.secret");
    const gammaSecret = readFileSync(gammaFile, "utf8").trim();
    expect(gammaSecret.length).toBeGreaterThanOrEqual(32);
    expect(statSync(gammaFile).mode & 0o777).toBe(0o600);

    const streamed = await (await post(`${server.url}/alpha`, { secret: alphaSecret })).text();
    expect(streamed).toContain("beta says ***\n");
    expect(streamed).toContain("gamma says ***\n");
    expect(lastLine(streamed)).toBe("[done] ok=true exitCode=0");
    const text = await (await post(`${server.url}/alpha?format=json`, { secret: alphaSecret })).text();
    expect(JSON.parse(text).run.stdout).toBe("beta says ***\ngamma says ***\n");
    for (const id of [idOf(streamed), JSON.parse(text).id])
      expectAbsent(everywhere(cwd, id, streamed, text), betaSecret, gammaSecret, alphaSecret);

    const env = envIn(envOut);
    expect(env.SERVICE_APP).toBe("alpha");
    expect(env.SERVICE_TRIGGER).toBe("webhook");
    expect(env.SERVICE_REPO_PATH).toBe(alpha.clone);
    expect(Object.values(env)).not.toContain(alphaSecret);
    expect(Object.values(env)).not.toContain(gammaSecret);
  });
});

describe("secret files", () => {
  test(".service.secret and generated app secrets are 0600 (their directory 0700)", async () => {
    const repo = makeRepo();
    const server = await startServer(repo.clone, { SERVICE_RUN_SCRIPT: "true" });
    await server.stop();
    expect(statSync(join(repo.clone, ".service.secret")).mode & 0o777).toBe(0o600);

    const cwd = oneAppDir(repo);
    const multi = await startServer(cwd);
    await multi.stop();
    expect(statSync(join(cwd, ".service", "secrets", "one.secret")).mode & 0o777).toBe(0o600);
    expect(statSync(join(cwd, ".service", "secrets")).mode & 0o777).toBe(0o700);
  });

  test("an empty .service.secret: the server refuses to start with one clear line", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo.clone, ".service.secret"), "\n", { mode: 0o600 });
    const start = await runCli([], { cwd: repo.clone, env: { SERVICE_PORT: "0" }, timeoutMs: 15_000 });
    expect(start.code).not.toBe(0);
    expect(start.stdout).not.toContain("listening on");
    const message = start.stderr.trim();
    expect(message.split("\n")).toHaveLength(1);
    expect(message).toContain(".service.secret");
    expect(message).toContain("empty");
  });

  test("an empty app secret file: the server refuses to start with one clear line", async () => {
    const repo = makeRepo();
    const cwd = oneAppDir(repo);
    mkdirSync(join(cwd, ".service", "secrets"), { recursive: true, mode: 0o700 });
    writeFileSync(join(cwd, ".service", "secrets", "one.secret"), "", { mode: 0o600 });
    const start = await runCli([], { cwd, env: { SERVICE_PORT: "0" }, timeoutMs: 15_000 });
    expect(start.code).not.toBe(0);
    expect(start.stdout).not.toContain("listening on");
    const message = start.stderr.trim();
    expect(message.split("\n")).toHaveLength(1);
    expect(message).toContain("one.secret");
    expect(message).toContain("empty");
  });

  test("a .service.secret readable by others (0644): the server starts and warns to chmod 600", async () => {
    const repo = makeRepo();
    const file = join(repo.clone, ".service.secret");
    writeFileSync(file, "a-readable-secret-value-123\n");
    chmodSync(file, 0o644);
    await using server = await startServer(repo.clone, { SERVICE_RUN_SCRIPT: "true" });
    const output = `${server.stdout.text}${server.stderr.text}`;
    expect(output).toContain(`chmod 600 ${file}`);
    expect(output).not.toContain("a-readable-secret-value-123");
    const res = await post(`${server.url}/?format=json`, { secret: "a-readable-secret-value-123" });
    expect((await res.json()).ok).toBe(true);
  });

  test("an app secret file readable by others: the server starts and warns to chmod 600", async () => {
    const repo = makeRepo();
    const cwd = oneAppDir(repo);
    const file = join(cwd, ".service", "secrets", "one.secret");
    mkdirSync(join(cwd, ".service", "secrets"), { recursive: true });
    writeFileSync(file, "one-app-secret-value-456\n");
    chmodSync(file, 0o644);
    await using server = await startServer(cwd);
    expect(`${server.stdout.text}${server.stderr.text}`).toContain(`chmod 600 ${file}`);
  });
});
