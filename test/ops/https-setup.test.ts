/**
 * The HTTPS question on a real pseudo-terminal (util-linux `script`): readable where the terminal reports no size,
 * and the setup text it prints says only what is left to do.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, baseEnv, makeRepo, runCli, SECRET, waitFor } from "../_support/helpers.ts";

const noPty = process.platform !== "linux" || Bun.which("script") === null;
const QUESTION_LINE = /^.*HTTPS.*\?.*$/m;

const ptys = new Set<Bun.Subprocess>();
afterAll(() => {
  for (const proc of ptys) proc.kill("SIGKILL");
});

const shellQuote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
const plain = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r/g, "");

/** The server CLI on a pseudo-terminal of `cols` columns (0: a terminal that reports no size). */
function startInPty(cwd: string, cols: number, env: Record<string, string | undefined> = {}) {
  const command = `stty cols ${cols} rows ${cols === 0 ? 0 : 40}; exec ${CLI.map(shellQuote).join(" ")}`;
  const proc = Bun.spawn(["script", "-qfec", command, "/dev/null"], {
    cwd,
    env: baseEnv({ SERVICE_PORT: "0", SERVICE_SECRET: SECRET, SERVICE_SKIP_HTTPS_PROMPT: undefined, ...env }),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  ptys.add(proc);
  const out = { text: "" };
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) out.text += decoder.decode(chunk, { stream: true });
  })();
  const screen = () => plain(out.text);
  return {
    screen,
    type(keys: string) {
      proc.stdin.write(keys);
      proc.stdin.flush();
    },
    banner: () =>
      waitFor(() => {
        if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}: ${screen()}`);
        return /listening on http:\/\/localhost:\d+/.test(screen()) || undefined;
      }, "the server banner"),
    async stop() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}

/** Answers the question with yes and a domain, declines the Caddy offer if it comes, and returns the screen. */
async function setUpHttps(pty: ReturnType<typeof startInPty>): Promise<string> {
  await waitFor(() => QUESTION_LINE.test(pty.screen()), "the HTTPS question");
  pty.type("y");
  await waitFor(() => /domain name/i.test(pty.screen()), "the domain question");
  pty.type("deploy.example.com\r");
  await waitFor(() => /Caddy is installed here|listening on http:/.test(pty.screen()), "the offer or the banner");
  if (/Caddy is installed here/.test(pty.screen())) pty.type("n");
  await pty.banner();
  return pty.screen();
}

describe("the HTTPS question on a terminal", () => {
  test.skipIf(noPty)(
    "on a terminal that reports 0 columns, the question is one readable line with HTTPS and ?",
    async () => {
      const repo = makeRepo();
      const pty = startInPty(repo.clone, 0);
      try {
        const line = await waitFor(() => QUESTION_LINE.exec(pty.screen())?.[0], "the HTTPS question on one line");
        expect(line).toContain("Set up HTTPS");
        pty.type("\r");
        await pty.banner();
      } finally {
        await pty.stop();
      }
    },
    30_000,
  );

  test.skipIf(noPty)(
    "the setup says to set hostname: 127.0.0.1 while the service listens on all addresses",
    async () => {
      const repo = makeRepo();
      const pty = startInPty(repo.clone, 120);
      try {
        const screen = await setUpHttps(pty);
        expect(screen).toContain("Then set hostname: 127.0.0.1 in service.yaml");
        expect(screen).toContain("https://deploy.example.com/ as the webhook URL");
      } finally {
        await pty.stop();
      }
    },
    30_000,
  );

  test.skipIf(noPty)(
    "with hostname already 127.0.0.1 the setup does not say to set it",
    async () => {
      const repo = makeRepo();
      const pty = startInPty(repo.clone, 120, { SERVICE_HOSTNAME: "127.0.0.1" });
      try {
        const screen = await setUpHttps(pty);
        expect(screen).not.toContain("hostname: 127.0.0.1");
        expect(screen).toContain("https://deploy.example.com/ as the webhook URL");
      } finally {
        await pty.stop();
      }
    },
    30_000,
  );
});

describe("one timeout rule: the longest deploy (deployLimitSeconds)", () => {
  test.skipIf(noPty)(
    "the nginx timeouts the HTTPS setup writes equal the systemd unit's TimeoutStopSec for the same config",
    async () => {
      const repo = makeRepo();
      const env = { SERVICE_RUN_TIMEOUT_MS: "600000", SERVICE_ROLLBACK_ON_FAILURE: "true" };
      const pty = startInPty(repo.clone, 120, env);
      try {
        await setUpHttps(pty);
      } finally {
        await pty.stop();
      }
      const nginx = readFileSync(join(repo.clone, ".service", "nginx.conf"), "utf8");
      const unit = await runCli(["systemd"], { cwd: repo.clone, env });
      expect(unit.code).toBe(0);
      const stop = /^TimeoutStopSec=(\d+)$/m.exec(unit.stdout)![1];
      expect(stop).toBe(String(3 * 600 + 120));
      expect(nginx).toContain(`proxy_read_timeout ${stop}s;`);
      expect(nginx).toContain(`proxy_send_timeout ${stop}s;`);
    },
    30_000,
  );
});
