/**
 * The command-line tool (docs/cli.md "CLI"): help,
 * version, the `deploy` exit code, unknown commands, and the interactive HTTPS question, which is asked only
 * when stdin is a terminal (checked under a real pseudo-terminal from util-linux `script`).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  lastLine,
  logFiles,
  makeRepo,
  readJson,
  ROOT,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
} from "../_support/helpers.ts";
import { noPty, setUpHttps, startInPty } from "../_support/pty.ts";
import { spawnDeploy } from "../_support/queueing.ts";
import { markerProcesses } from "../_support/hostile-fixtures.ts";

const QUESTION = /set\s*up\s*https/i;
describe("help and version", () => {
  test("--help exits 0 and describes the commands", async () => {
    const { code, stdout } = await runCli(["--help"], { cwd: tempDir() });
    expect(code).toBe(0);
    expect(stdout).toContain("USAGE");
    expect(stdout).toMatch(/^\s*serve\s+\S/m);
    expect(stdout).toMatch(/^\s*deploy\s+\S/m);
  });

  test("--help and serve --help point to service check and docs/configuration.md instead of listing the environment variables", async () => {
    for (const args of [["--help"], ["serve", "--help"]]) {
      const { code, stdout } = await runCli(args, { cwd: tempDir() });
      expect(code).toBe(0);
      const serve = stdout.split("\n").find((line) => /^\s*serve\s+\S/.test(line) || line.startsWith("Start the"))!;
      expect(serve).toContain("service check");
      expect(serve).toContain("docs/configuration.md");
      // SERVICE_CONFIG names the file; --strict says its own variable; no list of the others.
      expect(serve.match(/SERVICE_[A-Z_]+/g) ?? []).toEqual(["SERVICE_CONFIG"]);
      expect(stdout).not.toContain("SERVICE_PORT");
      expect(serve.length).toBeLessThan(300);
    }
  });

  test("deploy --help exits 0 and describes the deploy command", async () => {
    const { code, stdout } = await runCli(["deploy", "--help"], { cwd: tempDir() });
    expect(code).toBe(0);
    expect(stdout).toContain("USAGE");
    expect(stdout).toContain("deploy");
    expect(stdout).toContain("git pull");
  });

  test("--version prints the version of package.json", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    const { code, stdout } = await runCli(["--version"], { cwd: tempDir() });
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(version);
  });

  test("an unknown subcommand exits non-zero with a message naming it, and starts nothing", async () => {
    const cwd = tempDir();
    const { code, stdout, stderr } = await runCli(["frobnicate"], {
      cwd,
      env: { SERVICE_SECRET: SECRET, SERVICE_PORT: "0" },
      timeoutMs: 10_000,
    });
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(`${stdout}${stderr}`).toMatch(/unknown command\W+frobnicate/i);
    expect(stdout).not.toContain("listening on");
    expect(logFiles(cwd)).toEqual([]);
  });
});

describe('deploy subcommand (docs/cli.md "CLI")', () => {
  test("deploy exits 0 when the deploy is ok, printing the transcript up to [done] ok=true", async () => {
    const repo = makeRepo();
    const { code, stdout } = await runCli(["deploy"], {
      cwd: repo.clone,
      env: { SERVICE_RUN_SCRIPT: "echo deployed-by-cli" },
    });
    expect(code).toBe(0);
    expect(stdout).toContain("deployed-by-cli\n");
    expect(lastLine(stdout)).toBe("[done] ok=true exitCode=0");
  });

  test("deploy exits 1 when the run script fails", async () => {
    const repo = makeRepo();
    const { code, stdout } = await runCli(["deploy"], {
      cwd: repo.clone,
      env: { SERVICE_RUN_SCRIPT: "sh -c 'exit 3'" },
    });
    expect(code).toBe(1);
    expect(lastLine(stdout)).toBe("[done] ok=false exitCode=3");
  });

  test("deploy exits 1 when the run script cannot be started", async () => {
    const repo = makeRepo();
    const { code, stdout } = await runCli(["deploy"], {
      cwd: repo.clone,
      env: { SERVICE_RUN_SCRIPT: "no-such-command-service-test" },
    });
    expect(code).toBe(1);
    expect(lastLine(stdout)).toBe("[done] ok=false exitCode=null");
  });

  for (const [signal, cause] of [
    ["SIGINT", "Ctrl-C"],
    ["SIGHUP", "its terminal closed"],
  ] as const) {
    test(`deploy stopped by ${signal} (${cause}): the script's tree is stopped, the deploy ends with [done] and complete logs, exit 1`, async () => {
      const repo = makeRepo();
      const marker = `marker-${crypto.randomUUID()}`;
      await using deploy = spawnDeploy(repo.clone, {
        SERVICE_RUN_SCRIPT: `sh -c "echo waiting; sleep 300 # ${marker}"`,
      });
      const { proc, out } = deploy;
      const alive = () => markerProcesses(marker).length;
      await waitFor(() => out.text.includes("waiting\n") && alive() > 0, "the script to run");
      proc.kill(signal);
      expect(await proc.exited).toBe(1);
      expect(lastLine(await out.done)).toStartWith("[done] ok=false");
      await waitFor(() => alive() === 0, "the script's processes to end");
      const [json, log] = logFiles(repo.clone).map((f) => join(repo.clone, ".service", "logs", f));
      expect(readJson(json!).status).toBe("done");
      expect(lastLine(readFileSync(log!, "utf8"))).toStartWith("[done] ok=false");
    });
  }
});

// Timeouts above waitFor's 20 s, so a failure says what never came rather than "test timed out".
describe("the HTTPS question", () => {
  test("a non-interactive start (stdin not a terminal) never asks, even without SERVICE_SKIP_HTTPS_PROMPT", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_SKIP_HTTPS_PROMPT: undefined,
    });
    expect(server.stdout.text).toContain("Auth: required");
    expect(`${server.stdout.text}${server.stderr.text}`).not.toMatch(QUESTION);
    const res = await fetch(server.url);
    expect(res.status).toBe(404);
    await res.text();
  }, 25_000);

  test.skipIf(noPty)(
    "an interactive start asks; y and a domain write a Caddyfile and an nginx block under .service/, then the server starts",
    async () => {
      const repo = makeRepo();
      await using pty = startInPty(repo.clone, { SERVICE_SKIP_HTTPS_PROMPT: undefined, SERVICE_PORT: "0" });
      await waitFor(() => QUESTION.test(pty.screen()), "the HTTPS question");
      expect(pty.screen()).not.toContain("listening on");
      pty.type("y");
      await waitFor(() => /domain name/i.test(pty.screen()), "the domain question");
      pty.type("not a domain\r");
      await waitFor(() => /is not a domain name/.test(pty.screen()), "the domain to be refused");
      pty.type("deploy.example.com\r");
      // Where Caddy is installed and writable, the offer to install comes next: decline it.
      await waitFor(() => /Caddy is installed here|listening on http:/.test(pty.screen()), "the offer or the banner");
      if (/Caddy is installed here/.test(pty.screen())) pty.type("n");
      const port = await pty.banner();
      const screen = pty.screen();
      const howTo = screen.slice(screen.search(QUESTION));
      expect(howTo).toContain("sudo systemctl reload caddy");
      expect(howTo).toContain("nginx");
      expect(howTo.indexOf("Caddyfile")).toBeLessThan(howTo.indexOf("listening on"));
      const caddy = readFileSync(join(repo.clone, ".service", "Caddyfile"), "utf8");
      expect(caddy).toContain("deploy.example.com {");
      expect(caddy).toContain("flush_interval -1");
      const nginx = readFileSync(join(repo.clone, ".service", "nginx.conf"), "utf8");
      expect(nginx).toContain("server_name deploy.example.com;");
      expect(nginx).toContain("proxy_buffering off;");
      expect(nginx).toContain("proxy_set_header Host $host;");
      expect(nginx).toMatch(/proxy_read_timeout (\d+)s;/);
      expect(Number(/proxy_read_timeout (\d+)s;/.exec(nginx)![1]) * 1000).toBeGreaterThan(1_800_000);
      const res = await fetch(`http://localhost:${port}/`, {
        method: "POST",
        headers: { "x-service-secret": "wrong" },
      });
      expect(res.status).toBe(401);
      await res.text();
    },
    40_000,
  );

  test.skipIf(noPty)(
    "an interactive start answered with Enter (no, the default) starts without the setup text",
    async () => {
      const repo = makeRepo();
      await using pty = startInPty(repo.clone, { SERVICE_SKIP_HTTPS_PROMPT: undefined });
      await waitFor(() => QUESTION.test(pty.screen()), "the HTTPS question");
      pty.type("\r");
      await pty.banner();
      expect(pty.screen()).not.toContain("Caddy");
      expect(pty.screen()).not.toContain("nginx");
    },
    25_000,
  );

  test.skipIf(noPty)(
    "the question says how never to be asked: httpsPrompt: false in service.yaml, or SERVICE_SKIP_HTTPS_PROMPT=1",
    async () => {
      const repo = makeRepo();
      await using pty = startInPty(repo.clone);
      await waitFor(() => QUESTION.test(pty.screen()), "the HTTPS question");
      expect(pty.screen()).toContain("httpsPrompt: false");
      pty.type("\r");
      await pty.banner();
    },
    25_000,
  );

  test.skipIf(noPty)(
    "once a yes wrote the proxy files, an interactive start does not ask again and says in one line where they are; removed, it asks again",
    async () => {
      const repo = makeRepo();
      {
        await using pty = startInPty(repo.clone);
        await setUpHttps(pty);
      }
      const caddy = join(repo.clone, ".service", "Caddyfile");
      const nginx = join(repo.clone, ".service", "nginx.conf");
      {
        await using pty = startInPty(repo.clone);
        await pty.banner();
        const screen = pty.screen();
        expect(screen).not.toMatch(QUESTION);
        const line = screen.split("\n").find((l) => l.includes(caddy));
        expect(line).toBe(
          `HTTPS is set up: the proxy files are ${caddy} and ${nginx} (remove them to be asked again).`,
        );
      }
      rmSync(caddy);
      rmSync(nginx);
      await using pty = startInPty(repo.clone);
      await waitFor(() => QUESTION.test(pty.screen()), "the HTTPS question again");
      pty.type("\r");
      await pty.banner();
    },
    60_000,
  );

  test.skipIf(noPty)(
    "httpsPrompt: false in service.yaml: an interactive start does not ask, as with SERVICE_SKIP_HTTPS_PROMPT=1",
    async () => {
      const repo = makeRepo();
      writeFileSync(join(repo.clone, "service.yaml"), "httpsPrompt: false\nrunScript: echo ok\n");
      await using pty = startInPty(repo.clone);
      await pty.banner();
      expect(pty.screen()).not.toMatch(QUESTION);
      expect(pty.screen()).not.toContain("HTTPS is set up");
      const checked = await runCli(["check"], { cwd: repo.clone, env: { SERVICE_SECRET: SECRET } });
      expect(checked.stdout).toMatch(/httpsPrompt\s+false\s+\[file\]/);
    },
    25_000,
  );

  test.skipIf(noPty)(
    "with SERVICE_SKIP_HTTPS_PROMPT=1 an interactive start does not ask",
    async () => {
      const repo = makeRepo();
      await using pty = startInPty(repo.clone, { SERVICE_SKIP_HTTPS_PROMPT: "1" });
      await pty.banner();
      expect(pty.screen()).not.toMatch(QUESTION);
      expect(pty.screen()).toContain("Auth: required");
    },
    25_000,
  );

  test.skipIf(noPty)(
    "an interactive start whose output goes to a file (not a terminal) does not ask a question nobody sees",
    async () => {
      const repo = makeRepo();
      const output = join(tempDir(), "service.out");
      await using pty = startInPty(repo.clone, { SERVICE_SKIP_HTTPS_PROMPT: undefined }, { stdoutTo: output });
      await pty.banner();
      expect(pty.screen()).not.toMatch(QUESTION);
    },
    25_000,
  );
});

describe("the environment comes from the process only", () => {
  test("a .env file in the working directory is not loaded (its values could override the config or leak secrets)", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo.clone, ".env"), "SERVICE_RUN_SCRIPT=echo from-dotenv\nSERVICE_PATH=/dotenv\n");
    const { code, stdout } = await runCli(["check"], { cwd: repo.clone });
    expect(code).toBe(0);
    expect(stdout).toMatch(/runScript\s+npm run deploy\s+\[default\]/);
    expect(stdout).toMatch(/path\s+\/\s+\[default\]/);
  });
});

describe("one service per port", () => {
  test("a second start on a port in use exits 1 naming the port, and the first service keeps every request", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo from-the-first", SERVICE_HOSTNAME: "0.0.0.0" };
    await using first = await startServer(repo.clone, env);
    const second = await runCli([], {
      cwd: repo.clone,
      env: { ...env, SERVICE_PORT: String(first.port), SERVICE_RUN_SCRIPT: "echo from-the-second" },
      timeoutMs: 10_000,
    });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`port ${first.port} is already in use`);
    expect(second.stdout).not.toContain("listening on");
    // Had both bound it (SO_REUSEPORT), the kernel would share the connections between them.
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${first.url}/?format=json`, {
        method: "POST",
        headers: { "x-service-secret": SECRET },
      });
      expect((await res.json()).run.stdout).toBe("from-the-first\n");
    }
  });
});

describe("arguments a command does not define are refused, not ignored", () => {
  const mistakes: [string[], string][] = [
    [["--prot=8080"], "unknown option --prot (see service serve --help)"],
    [["serve", "--bogus"], "unknown option --bogus (see service serve --help)"],
    [["deploy", "now"], 'unexpected argument "now" (see service deploy --help)'],
    [["deploy", "--app", "web"], "--app web: the configuration has no apps (single-app mode)"],
    [["deploy", "--app="], "option --app needs a value"],
    [["logs", "last", "extra"], 'unexpected argument "extra" (see service logs --help)'],
    [["logs", "-x"], "unknown option -x (see service logs --help)"],
    [["check", "--json"], "unknown option --json (see service check --help)"],
    [["systemd", "-o"], "option -o needs a value (see service systemd --help)"],
  ];
  for (const [args, message] of mistakes) {
    test(`service ${args.join(" ")}: exit 1 with "${message}", nothing started or deployed`, async () => {
      const repo = makeRepo();
      const { code, stdout, stderr } = await runCli(args, {
        cwd: repo.clone,
        env: { SERVICE_SECRET: SECRET, SERVICE_PORT: "0", SERVICE_RUN_SCRIPT: "echo ran" },
        timeoutMs: 10_000,
      });
      expect(code).toBe(1);
      expect(stderr).toContain(message);
      expect(stdout).not.toContain("listening on");
      expect(logFiles(repo.clone)).toEqual([]);
    });
  }

  test("the options a command defines still work: logs -f, --limit 5, --no-json, a string option's value that starts with a dash", async () => {
    const repo = makeRepo();
    for (const args of [
      ["logs", "-f"],
      ["logs", "--limit", "5"],
      ["logs", "--limit=5", "--no-json", "--failed"],
      ["systemd", "--output", "-unit.service"],
    ]) {
      // With a secret: without one, `service systemd` says on stderr to create it first.
      const { code, stderr } = await runCli(args, { cwd: repo.clone, env: { SERVICE_SECRET: SECRET } });
      expect({ args, code, stderr }).toEqual({ args, code: 0, stderr: "" });
    }
  });
});
