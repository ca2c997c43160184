/**
 * The HTTPS question on a real pseudo-terminal (util-linux `script`): readable where the terminal reports no size,
 * and the setup text it prints says only what is left to do.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, runCli, waitFor } from "../_support/helpers.ts";
import { HTTPS_QUESTION_LINE, noPty, setUpHttps, startInPty } from "../_support/pty.ts";

describe("the HTTPS question on a terminal", () => {
  test.skipIf(noPty)(
    "on a terminal that reports 0 columns, the question is one readable line with HTTPS and ?",
    async () => {
      const repo = makeRepo();
      await using pty = startInPty(repo.clone, {}, { cols: 0 });
      const line = await waitFor(() => HTTPS_QUESTION_LINE.exec(pty.screen())?.[0], "the HTTPS question on one line");
      expect(line).toContain("Set up HTTPS");
      pty.type("\r");
      await pty.banner();
    },
    30_000,
  );

  test.skipIf(noPty)(
    "the setup says to set hostname: 127.0.0.1 while the service listens on all addresses",
    async () => {
      const repo = makeRepo();
      await using pty = startInPty(repo.clone);
      const screen = await setUpHttps(pty);
      expect(screen).toContain("Then set hostname: 127.0.0.1 in service.yaml");
      expect(screen).toContain("https://deploy.example.com/ as the webhook URL");
    },
    30_000,
  );

  test.skipIf(noPty)(
    "with hostname already 127.0.0.1 the setup does not say to set it",
    async () => {
      const repo = makeRepo();
      await using pty = startInPty(repo.clone, { SERVICE_HOSTNAME: "127.0.0.1" });
      const screen = await setUpHttps(pty);
      expect(screen).not.toContain("hostname: 127.0.0.1");
      expect(screen).toContain("https://deploy.example.com/ as the webhook URL");
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
      {
        await using pty = startInPty(repo.clone, env);
        await setUpHttps(pty);
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
