/**
 * The deploy pipeline end to end: real git repositories, the real server and `deploy` command as processes, real
 * run scripts. Files the script touches and `ps` prove what ran and what was killed.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  git,
  lastLine,
  logFiles,
  makeLocalRepo,
  makeRepo,
  post,
  readJson,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
  type RunningServer,
  defer,
} from "../_support/helpers.ts";
import { spawnCli } from "../_support/ops-helpers.ts";

setDefaultTimeout(25_000);

// ---------------------------------------------------------------------------------------------------------------
// Helpers of this file.

/** A deploy through the server, as the JSON result. */
async function deployJson(server: RunningServer): Promise<any> {
  const res = await post(`${server.url}/?format=json`, { secret: SECRET });
  expect(res.status).toBe(200);
  return res.json();
}

/** A deploy through the server, as the streamed text. */
async function deployText(server: RunningServer): Promise<string> {
  const res = await post(server.url, { secret: SECRET });
  expect(res.status).toBe(200);
  return res.text();
}

/** Reads a streamed response in the background, so a test can wait for text while the deploy still runs. */
function readLive(res: Response): { state: { text: string; done: boolean }; finished: Promise<void> } {
  const state = { text: "", done: false };
  const finished = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) state.text += decoder.decode(chunk, { stream: true });
    state.done = true;
  })();
  return { state, finished };
}

/**
 * A `sleep` duration unique to one test: `sleep 301.482913577` sleeps long enough and its argument is a marker
 * that finds exactly the processes this test started in `ps` (a grandchild carries no other name of ours).
 */
function sleepMarker(): string {
  return `${300 + Math.floor(Math.random() * 100)}.${String(Math.floor(Math.random() * 1e9)).padStart(9, "7")}`;
}

/** Pids of the processes whose command line contains `marker`. */
function pidsWith(marker: string): number[] {
  const ps = Bun.spawnSync(["ps", "-eo", "pid=,args="], { stdout: "pipe" }).stdout.toString();
  return ps
    .split("\n")
    .filter((line) => line.includes(marker))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** Cleanup: kills the processes this test left, found by their marker, one pid at a time. */
function killWith(marker: string): void {
  for (const pid of pidsWith(marker)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}

/** An executable that prints each argument on a line of its own, in brackets: shows exactly how argv was split. */
function argvPrinter(dir: string): string {
  const file = join(dir, "printargs");
  writeFileSync(file, '#!/bin/sh\nfor a in "$@"; do printf "[%s]\\n" "$a"; done\n');
  chmodSync(file, 0o755);
  return file;
}

/** `env` output as a map (values may contain `=`). */
function parseEnv(text: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) env.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return env;
}

/** `using _killed = killedAtEnd(marker, …)`: when the block ends, kills the processes the test left (killWith). */
function killedAtEnd(...markers: string[]): Disposable {
  return defer(() => {
    for (const marker of markers) killWith(marker);
  });
}

/** `await using server = await serverWith(cwd, env)`: the server with the test secret, stopped when the block ends. */
function serverWith(cwd: string, env: Record<string, string>): Promise<RunningServer> {
  return startServer(cwd, { SERVICE_SECRET: SECRET, ...env });
}

// ---------------------------------------------------------------------------------------------------------------

describe('run script, line by line (docs/deploy-control.md "The run script")', () => {
  test("a multi-line script runs line by line in order; blank lines and # lines are skipped", async () => {
    const repo = makeRepo();
    const dir = tempDir();
    const script = [
      "# first a comment line-that-never-runs",
      "echo one",
      "",
      "   ",
      `echo two > ${dir}/two.txt`,
      "  # an indented comment line-that-never-runs",
      `${argvPrinter(dir)} three`,
      "",
    ].join("\n");
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: script });
    const result = await deployJson(server);
    expect(result.ok).toBe(true);
    expect(result.run.exitCode).toBe(0);
    expect(result.run.stdout).toBe("one\n[three]\n");
    expect(readFileSync(join(dir, "two.txt"), "utf8")).toBe("two\n");
    expect(readFileSync(join(repo.clone, result.log.log), "utf8")).not.toContain("line-that-never-runs");
  });

  test("the run stops at the first line that exits non-zero; later lines do not run", async () => {
    const repo = makeRepo();
    const dir = tempDir();
    const script = [
      `touch ${dir}/first`,
      `sh -c "echo failing; exit 3"`,
      `touch ${dir}/after`,
      "echo never-printed",
    ].join("\n");
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: script });
    const result = await deployJson(server);
    expect(result.ok).toBe(false);
    expect(result.run.exitCode).toBe(3);
    expect(result.run.stdout).toBe("failing\n");
    expect(existsSync(join(dir, "first"))).toBe(true);
    expect(existsSync(join(dir, "after"))).toBe(false);

    const text = await deployText(server);
    expect(lastLine(text)).toBe("[done] ok=false exitCode=3");
    expect(text).not.toContain("never-printed\n");
    expect(existsSync(join(dir, "after"))).toBe(false);
  });

  test("a line that cannot start also stops a multi-line script", async () => {
    const repo = makeRepo();
    const dir = tempDir();
    const script = [`touch ${dir}/first`, `no-such-command-${crypto.randomUUID()}`, `touch ${dir}/after`].join("\n");
    const { code, stdout } = await runCli(["deploy"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: script } });
    expect(code).toBe(1);
    expect(lastLine(stdout)).toBe("[done] ok=false exitCode=null");
    expect(existsSync(join(dir, "first"))).toBe(true);
    expect(existsSync(join(dir, "after"))).toBe(false);
  });

  // A missing command tells the two ways apart: spawned directly it cannot start (exitCode null), through
  // `sh -c` the shell reports it (127). A single-line script follows the same rule as each line of a longer one.
  const missing = `no-such-command-${crypto.randomUUID().slice(0, 8)}`;
  const routes: [rule: string, script: string, done: string][] = [
    ["a plain single line is spawned directly", `${missing} --flag "a b"`, "[done] ok=false exitCode=null"],
    ["a single line with && goes through sh -c", `${missing} && true`, "[done] ok=false exitCode=127"],
    ["a single line with ; goes through sh -c", `true; ${missing}`, "[done] ok=false exitCode=127"],
    ["a single line with | goes through sh -c", `true | ${missing}`, "[done] ok=false exitCode=127"],
    ["a single line with a redirection goes through sh -c", `${missing} > /dev/null`, "[done] ok=false exitCode=127"],
    ["a single line with $VAR goes through sh -c", `${missing} "$HOME"`, "[done] ok=false exitCode=127"],
    ["a plain line of a multi-line script is spawned directly", `true\n${missing}`, "[done] ok=false exitCode=null"],
    [
      "a line with && in a multi-line script goes through sh -c",
      `true\n${missing} && true`,
      "[done] ok=false exitCode=127",
    ],
  ];
  test.each(routes)("%s", async (_rule, script, done) => {
    const repo = makeRepo();
    const { stdout } = await runCli(["deploy"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: script } });
    expect(lastLine(stdout)).toBe(done);
  });

  test("lines with the builtins export, set and cd go through sh -c (there is no such program to spawn)", async () => {
    const repo = makeRepo();
    const dir = tempDir();
    const script = ["export FOO=bar", "set -e", `cd ${dir}`, "unset FOO", `echo done > ${dir}/done.txt`].join("\n");
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: script });
    const result = await deployJson(server);
    expect(result.error).toBeNull();
    expect(result.run.exitCode).toBe(0);
    expect(result.ok).toBe(true);
    expect(readFileSync(join(dir, "done.txt"), "utf8")).toBe("done\n");
  });

  test("a directly spawned line gets its arguments split as a shell would, quotes respected, nothing expanded", async () => {
    const repo = makeRepo();
    const dir = tempDir();
    const printargs = argvPrinter(dir);
    const script = [
      `${printargs} "a b" 'c d' e '$HOME' "" x"y z"`,
      `node -e "console.log(JSON.stringify(process.argv.slice(1)))" "x y" 'it''s'`,
      // Through the shell (the $ asks for it): expanded as the shell does.
      `${printargs} "$SERVICE_TRIGGER" a\\ b`,
    ].join("\n");
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: script });
    const result = await deployJson(server);
    expect(result.run.exitCode).toBe(0);
    expect(result.run.stdout).toBe(
      ["[a b]", "[c d]", "[e]", "[$HOME]", "[]", "[xy z]", '["x y","its"]', "[webhook]", "[a b]", ""].join("\n"),
    );
  });

  test("an executable file without a #! line runs as a shell script, as a shell would run it", async () => {
    const repo = makeRepo();
    const dir = tempDir();
    const file = join(dir, "no-shebang");
    writeFileSync(file, 'echo "no shebang: $1"\n');
    chmodSync(file, 0o755);
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: `${file} "x y"` });
    const result = await deployJson(server);
    expect(result.error).toBeNull();
    expect(result.run.exitCode).toBe(0);
    expect(result.run.stdout).toBe("no shebang: x y\n");
  });
});

describe('a run command that cannot start (docs/http.md "The stream")', () => {
  const cases: [what: string, script: (dir: string) => string][] = [
    ["a command that is not found", () => `no-such-command-${crypto.randomUUID()} --version`],
    [
      "a file that is not executable",
      (dir) => {
        writeFileSync(join(dir, "deploy.sh"), "#!/bin/sh\necho should-not-run\n", { mode: 0o644 });
        return join(dir, "deploy.sh");
      },
    ],
    ["a directory", (dir) => dir],
  ];
  test.each(cases)(
    "%s: run.exitCode null, error set, ok=false, stream ends [done] ok=false exitCode=null",
    async (_what, script) => {
      const repo = makeRepo();
      const dir = tempDir();
      await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: script(dir) });
      const result = await deployJson(server);
      expect(result.ok).toBe(false);
      expect(result.run.exitCode).toBeNull();
      expect(typeof result.error).toBe("string");
      expect(result.error.length).toBeGreaterThan(0);
      expect(result.pull.success).toBe(true);
      expect(result.run.stdout).not.toContain("should-not-run");

      const text = await deployText(server);
      expect(lastLine(text)).toBe("[done] ok=false exitCode=null");
    },
  );
});

describe('runTimeoutMs (docs/deploy-control.md "The run script")', () => {
  test("runTimeoutMs kills the whole process tree: the script, its children and grandchildren", async () => {
    const repo = makeRepo();
    const child = sleepMarker();
    const grandchild = sleepMarker();
    // sh starts a sleep in the background and another sh that starts a sleep: three levels below the service.
    const script = ["echo started", `sh -c "sleep ${child} & sh -c 'sleep ${grandchild}; echo never' & wait"`].join(
      "\n",
    );
    using _killed = killedAtEnd(child, grandchild);
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: script, SERVICE_RUN_TIMEOUT_MS: "3000" });
    const res = await post(server.url, { secret: SECRET });
    const { state, finished } = readLive(res);
    // The tree exists while the deploy runs...
    await waitFor(
      () => pidsWith(`sleep ${child}`).length > 0 && pidsWith(`sleep ${grandchild}`).length > 0,
      "the script's sleeps to start",
    );
    await finished;
    // ...and none of it outlives the timeout.
    await waitFor(() => pidsWith(child).length === 0 && pidsWith(grandchild).length === 0, "the whole tree to be gone");
    expect(state.text).toContain("started");
    expect(state.text).toContain("timed out");
    expect(state.text.split("\n")).not.toContain("never");
    expect(lastLine(state.text)).toMatch(/^\[done\] ok=false exitCode=(\d+|null)$/);
    expect(lastLine(state.text)).not.toBe("[done] ok=false exitCode=0");

    const result = await deployJson(server);
    expect(result.ok).toBe(false);
    expect(result.run.timedOut).toBe(true);
    expect(typeof result.error).toBe("string");
    expect(result.run.exitCode).not.toBe(0);
    await waitFor(
      () => pidsWith(child).length === 0 && pidsWith(grandchild).length === 0,
      "the whole tree to be gone again",
    );
  });

  test("a script that ignores SIGTERM is still killed (SIGKILL after the grace)", async () => {
    const repo = makeRepo();
    const marker = sleepMarker();
    // An ignored signal stays ignored across exec: the sleep ignores SIGTERM too.
    const script = `sh -c "trap '' TERM; sleep ${marker}; echo never"`;
    using _killed = killedAtEnd(marker);
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: script, SERVICE_RUN_TIMEOUT_MS: "1000" });
    const result = await deployJson(server);
    expect(result.ok).toBe(false);
    expect(result.run.timedOut).toBe(true);
    expect(typeof result.error).toBe("string");
    expect(result.run.stdout.split("\n")).not.toContain("never");
    await waitFor(() => pidsWith(marker).length === 0, "the TERM-ignoring tree to be gone");
  });

  test("a child that left the process group (setsid) outlives the timeout, and the stream says exactly what was stopped and what was not", async () => {
    const repo = makeRepo();
    const escaped = sleepMarker();
    const inGroup = sleepMarker();
    const script = `sh -c "setsid sleep ${escaped} & sleep ${inGroup}"`;
    using _killed = killedAtEnd(escaped, inGroup);
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: script, SERVICE_RUN_TIMEOUT_MS: "1000" });
    const text = await deployText(server);
    const [escapedPid] = pidsWith(`sleep ${escaped}`);
    expect(escapedPid).toBeNumber();
    expect(text).toMatch(
      /^\[run\] timed out after 1000 ms \(runTimeoutMs\); stopped process group \d+ \(2 processes: sh, sleep\)/m,
    );
    expect(text).toContain(
      `; not stopped: ${escapedPid} (sleep), started by this deploy but outside its process group (setsid or a daemon)`,
    );
    await waitFor(() => pidsWith(inGroup).length === 0, "the process group to be gone");
    expect(pidsWith(`sleep ${escaped}`)).toEqual([escapedPid!]);
  });

  test("runTimeoutMs bounds the whole script: later lines do not run after a timeout", async () => {
    const repo = makeRepo();
    const dir = tempDir();
    const marker = sleepMarker();
    const script = [`sleep ${marker}`, `touch ${dir}/after`].join("\n");
    using _killed = killedAtEnd(marker);
    const { code, stdout } = await runCli(["deploy"], {
      cwd: repo.clone,
      env: { SERVICE_RUN_SCRIPT: script, SERVICE_RUN_TIMEOUT_MS: "1000" },
    });
    expect(code).toBe(1);
    expect(stdout).toContain("timed out");
    expect(lastLine(stdout)).toMatch(/^\[done\] ok=false /);
    expect(existsSync(join(dir, "after"))).toBe(false);
    await waitFor(() => pidsWith(marker).length === 0, "the sleep to be gone");
  });
});

describe("children left running in the background do not hold the deploy", () => {
  const scripts: [how: string, line: (marker: string) => string][] = [
    ["nohup with its output redirected", (marker) => `nohup sleep ${marker} > /dev/null 2>&1 &`],
    ["without a redirect (the child keeps the output pipe)", (marker) => `sleep ${marker} &`],
  ];

  test.each(scripts)(
    "a script that backgrounds a long-running child %s ends with [done] ok=true",
    async (_how, line) => {
      const repo = makeRepo();
      const marker = sleepMarker();
      using _killed = killedAtEnd(marker);
      await using server = await serverWith(repo.clone, {
        SERVICE_RUN_SCRIPT: [line(marker), "echo after-background"].join("\n"),
      });
      const text = await deployText(server);
      expect(text).toContain("after-background");
      expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
      // The deploy did not wait for the child, and did not kill it either (that is how an app gets restarted).
      expect(pidsWith(`sleep ${marker}`).length).toBeGreaterThan(0);
    },
  );

  test.each(scripts)("the deploy command exits after a script that backgrounds a child %s", async (_how, line) => {
    const repo = makeRepo();
    const marker = sleepMarker();
    using _killed = killedAtEnd(marker);
    const { code, stdout } = await runCli(["deploy"], {
      cwd: repo.clone,
      env: { SERVICE_RUN_SCRIPT: line(marker) },
      timeoutMs: 15_000,
    });
    expect(lastLine(stdout)).toBe("[done] ok=true exitCode=0");
    expect(code).toBe(0);
    expect(pidsWith(`sleep ${marker}`).length).toBeGreaterThan(0);
  });
});

describe('git pull (docs/http.md "The JSON result (`?format=json`)": pull.success)', () => {
  test("a repository without a remote counts as a successful pull and the script still runs", async () => {
    const clone = makeLocalRepo();
    const dir = tempDir();
    await using server = await serverWith(clone, { SERVICE_RUN_SCRIPT: `touch ${dir}/ran` });
    const result = await deployJson(server);
    expect(result.pull.success).toBe(true);
    expect(result.error).toBeNull();
    expect(result.ok).toBe(true);
    expect(result.run.exitCode).toBe(0);
    expect(existsSync(join(dir, "ran"))).toBe(true);
  });

  test("a pull that fails (the remote moved away) gives pull.success false, error set and ok=false", async () => {
    const repo = makeRepo();
    renameSync(repo.remote, `${repo.remote}.moved`);
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: "true" });
    const result = await deployJson(server);
    expect(result.pull.success).toBe(false);
    expect(typeof result.error).toBe("string");
    expect(result.ok).toBe(false);
    expect(result.pull.stderr.length).toBeGreaterThan(0);

    const text = await deployText(server);
    expect(lastLine(text)).toStartWith("[done] ok=false ");
  });

  test("a remote on a closed port fails the pull without hanging", async () => {
    const repo = makeRepo();
    const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = listener.port;
    listener.stop(true);
    git(repo.clone, "remote", "set-url", "origin", `http://127.0.0.1:${port}/x.git`);
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: "true" });
    const result = await deployJson(server);
    expect(result.pull.success).toBe(false);
    expect(typeof result.error).toBe("string");
    expect(result.ok).toBe(false);
  });

  test("a remote that asks for credentials fails the pull without prompting (GIT_TERMINAL_PROMPT=0) and without hanging", async () => {
    const repo = makeRepo();
    let asked = 0;
    using gitHost = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch() {
        asked++;
        return new Response("authentication required\n", {
          status: 401,
          headers: { "www-authenticate": 'Basic realm="git"' },
        });
      },
    });
    git(repo.clone, "remote", "set-url", "origin", `http://127.0.0.1:${gitHost.port}/private.git`);
    // The service's own environment asks git to prompt; the pull must not follow it.
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: "true", GIT_TERMINAL_PROMPT: "1" });
    const result = await deployJson(server);
    expect(asked).toBeGreaterThan(0);
    expect(result.pull.success).toBe(false);
    expect(typeof result.error).toBe("string");
    expect(result.ok).toBe(false);
    expect(result.pull.stderr).toContain("terminal prompts disabled");
  });

  test("a commit pushed between two deploys is pulled by the second", async () => {
    const repo = makeRepo({ "version.txt": "v1\n" });
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: "cat version.txt" });
    const first = await deployJson(server);
    expect(first.run.stdout).toBe("v1\n");
    const commit = repo.push({ "version.txt": "v2\n" }, "v2");
    const second = await deployJson(server);
    expect(second.pull.success).toBe(true);
    expect(second.run.stdout).toBe("v2\n");
    expect(repo.head()).toBe(commit);
  });
});

describe("the run script's environment", () => {
  test("has SERVICE_DEPLOY_ID, SERVICE_TRIGGER=webhook, SERVICE_REPO_PATH and SERVICE_COMMIT_BEFORE, and not SERVICE_SECRET", async () => {
    const repo = makeRepo();
    const dir = tempDir();
    const before = repo.head();
    await using server = await serverWith(repo.clone, { SERVICE_RUN_SCRIPT: `env > ${dir}/env.txt` });
    repo.push({ "new.txt": "x\n" }, "second");
    const result = await deployJson(server);
    expect(result.ok).toBe(true);
    const text = readFileSync(join(dir, "env.txt"), "utf8");
    const env = parseEnv(text);
    expect(env.get("SERVICE_DEPLOY_ID")).toBe(result.log.id);
    expect(env.get("SERVICE_TRIGGER")).toBe("webhook");
    expect(env.get("SERVICE_REPO_PATH")).toBe(repo.clone);
    expect(env.get("SERVICE_COMMIT_BEFORE")).toBe(before);
    expect(env.has("SERVICE_SECRET")).toBe(false);
    expect(text).not.toContain(SECRET);
  });

  test("a deploy by the deploy command has SERVICE_TRIGGER=cli and no SERVICE_SECRET either", async () => {
    const repo = makeRepo();
    const dir = tempDir();
    const before = repo.head();
    const { code } = await runCli(["deploy"], {
      cwd: repo.clone,
      env: { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: `env > ${dir}/env.txt` },
    });
    expect(code).toBe(0);
    const text = readFileSync(join(dir, "env.txt"), "utf8");
    const env = parseEnv(text);
    expect(env.get("SERVICE_TRIGGER")).toBe("cli");
    expect(env.get("SERVICE_REPO_PATH")).toBe(repo.clone);
    expect(env.get("SERVICE_COMMIT_BEFORE")).toBe(before);
    expect(env.get("SERVICE_DEPLOY_ID")).toMatch(/^[0-9a-f-]{36}$/);
    expect(env.has("SERVICE_SECRET")).toBe(false);
    expect(text).not.toContain(SECRET);
  });
});

describe('the deploy command (docs/cli.md "CLI")', () => {
  test("deploy prints the output live, while the script still runs", async () => {
    const repo = makeRepo();
    const dir = tempDir();
    const go = join(dir, "go");
    const script = [
      "echo first-output",
      `sh -c 'while [ ! -e ${go} ]; do sleep 0.05; done'`,
      "echo second-output",
    ].join("\n");
    await using cli = spawnCli(["deploy"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: script } });
    await waitFor(() => cli.stdout.text.includes("first-output\n"), "the first line's output");
    expect(cli.proc.exitCode).toBeNull();
    expect(cli.stdout.text).not.toContain("second-output");
    writeFileSync(go, "");
    // Its exit code, once its output is read to the end.
    expect(await cli.exited).toBe(0);
    expect(cli.stdout.text).toContain("second-output\n");
    expect(lastLine(cli.stdout.text)).toBe("[done] ok=true exitCode=0");
  });

  const outcomes: [rule: string, script: string, code: number, done: string][] = [
    ["exits 0 when the deploy is ok", "echo fine", 0, "[done] ok=true exitCode=0"],
    ["exits 1 when the script exits non-zero", `sh -c "exit 4"`, 1, "[done] ok=false exitCode=4"],
    [
      "exits 1 when the script cannot start",
      `no-such-command-${crypto.randomUUID()}`,
      1,
      "[done] ok=false exitCode=null",
    ],
  ];
  test.each(outcomes)("deploy %s", async (_rule, script, code, done) => {
    const repo = makeRepo();
    const result = await runCli(["deploy"], { cwd: repo.clone, env: { SERVICE_RUN_SCRIPT: script } });
    expect(lastLine(result.stdout)).toBe(done);
    expect(result.code).toBe(code);
  });

  test("deploy writes the .json and .log files with trigger cli", async () => {
    const repo = makeRepo();
    const { code, stdout } = await runCli(["deploy"], {
      cwd: repo.clone,
      env: { SERVICE_RUN_SCRIPT: "echo logged-output" },
    });
    expect(code).toBe(0);
    const files = logFiles(repo.clone);
    expect(files).toHaveLength(2);
    const [json, log] = files as [string, string];
    expect(json).toMatch(/^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}Z_[0-9a-f-]{36}\.json$/);
    expect(log).toBe(json.replace(/\.json$/, ".log"));
    const record = readJson(join(repo.clone, ".service", "logs", json));
    expect(record.trigger).toBe("cli");
    expect(record.result.ok).toBe(true);
    expect(record.result.run.stdout).toBe("logged-output\n");
    expect(json).toContain(record.result.id);
    const text = readFileSync(join(repo.clone, ".service", "logs", log), "utf8");
    expect(text).toContain("logged-output\n");
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(stdout).toContain("logged-output\n");
  });
});
