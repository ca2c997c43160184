import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, runCli, tempDir } from "../_support/helpers.ts";

describe("service systemd (a ready unit for the current config)", () => {
  test("prints WorkingDirectory, User, ExecStart, Restart=on-failure, KillMode=mixed, TimeoutStopSec above runTimeoutMs, SERVICE_SKIP_HTTPS_PROMPT=1", async () => {
    const repo = makeRepo();
    const { code, stdout } = await runCli(["systemd", "--user", "root"], {
      cwd: repo.clone,
      env: { SERVICE_RUN_TIMEOUT_MS: "600000" },
    });
    expect(code).toBe(0);
    expect(stdout).toContain(`WorkingDirectory=${repo.clone}\n`);
    expect(stdout).toContain("User=root\n");
    expect(stdout).toMatch(/^ExecStart=\S+/m);
    expect(stdout).toContain("Restart=on-failure\n");
    expect(stdout).toContain("KillMode=mixed\n");
    // The cgroup is the service's to divide among the deploys with limits (docs/production.md "Limits").
    expect(stdout).toContain("Delegate=yes\n");
    expect(stdout).toContain("Environment=SERVICE_SKIP_HTTPS_PROMPT=1\n");
    const stop = Number(/^TimeoutStopSec=(\d+)$/m.exec(stdout)![1]);
    expect(stop * 1000).toBeGreaterThan(600_000);
    expect(stdout).toContain("[Install]\nWantedBy=multi-user.target");
  });

  test("in multi-app mode the stop timeout outlasts the longest app's runTimeoutMs", async () => {
    const cwd = tempDir();
    writeFileSync(
      join(cwd, "service.yaml"),
      "apps:\n  - {name: a, host: a.example.com, path: /, repoPath: /srv/a, runScript: 'true', runTimeoutMs: 1000}\n" +
        "  - {name: b, host: b.example.com, path: /, repoPath: /srv/b, runScript: 'true', runTimeoutMs: 7200000}\n",
    );
    const { code, stdout } = await runCli(["systemd"], { cwd });
    expect(code).toBe(0);
    expect(Number(/^TimeoutStopSec=(\d+)$/m.exec(stdout)![1]) * 1000).toBeGreaterThan(7_200_000);
  });

  test("--output writes the unit and says how to enable it", async () => {
    const cwd = tempDir();
    const { code, stdout } = await runCli(["systemd", "--output", "deploy.service"], { cwd });
    expect(code).toBe(0);
    expect(readFileSync(join(cwd, "deploy.service"), "utf8")).toContain("KillMode=mixed");
    expect(stdout).toContain("systemctl daemon-reload");
  });

  test("the unit turns strict config mode on (SERVICE_STRICT_CONFIG=1): an invalid config file stops the service instead of opening it", async () => {
    const repo = makeRepo();
    const { code, stdout } = await runCli(["systemd", "--user", "root"], { cwd: repo.clone });
    expect(code).toBe(0);
    expect(stdout).toContain("Environment=SERVICE_STRICT_CONFIG=1\n");
  });

  test('with USER and SUDO_USER unset, User= is the name of the current uid, never "unknown"', async () => {
    const cwd = tempDir();
    const { code, stdout } = await runCli(["systemd"], {
      cwd,
      env: { USER: undefined, SUDO_USER: undefined, LOGNAME: undefined },
    });
    expect(code).toBe(0);
    const expected = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .map((line) => line.split(":"))
      .find((fields) => fields[2] === String(process.getuid!()))![0]!;
    expect(stdout).toContain(`User=${expected}\n`);
    expect(stdout).not.toContain("User=unknown");
  });

  test("a --user that does not exist is refused with one line and exit 1", async () => {
    const cwd = tempDir();
    const { code, stdout, stderr } = await runCli(["systemd", "--user", "no-such-user-x9q"], { cwd });
    expect(code).toBe(1);
    const lines = `${stdout}${stderr}`.split("\n").filter((line) => line.trim() !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"no-such-user-x9q"');
    expect(lines[0]).toContain("does not exist");
    expect(stdout).not.toContain("[Service]");
  });
});

describe("service systemd: descriptors", () => {
  test('the unit sets LimitNOFILE, the limit the connection bounds are taken from (docs/production.md "systemd")', async () => {
    const { code, stdout } = await runCli(["systemd", "--user", "root"], { cwd: tempDir() });
    expect(code).toBe(0);
    expect(stdout).toContain("\nLimitNOFILE=65536\n");
  });

  test("with no webhook secret yet, it says to create one before the first start (a generated one lands in the journal)", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo.clone, "service.yaml"), "runScript: npm run deploy\n");
    const before = await runCli(["systemd", "--user", "root"], { cwd: repo.clone });
    expect(before.code).toBe(0);
    expect(before.stdout).not.toContain("secret rotate");
    expect(before.stderr).toContain(
      "no webhook secret yet: create it before the first start with: service secret rotate (a secret generated at the first start is printed into the journal)",
    );
    expect((await runCli(["secret", "rotate"], { cwd: repo.clone })).code).toBe(0);
    const after = await runCli(["systemd", "--user", "root"], { cwd: repo.clone });
    expect(after.stderr).not.toContain("no webhook secret");
    expect(after.stdout).toBe(before.stdout);
  });
});
