/**
 * `service token add|list|revoke` (docs/admin.md "Tokens"): the 0600 file and the entry in the config file the
 * server loads (comments and order kept), followed by the running server without a restart; never the value off a
 * terminal; bad names, duplicates, unknown apps and roles refused with nothing written.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN, bearer, startAdmin } from "../_support/admin-helpers.ts";
import { baseEnv, CLI, makeRepo, runCli, runProcess, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import { noPty, startInPty } from "../_support/pty.ts";
import { tokenSetup } from "../_support/token-fixtures.ts";

/** A user the config file is not writable for: the test's own, or, as root (who writes anything), nobody. */
const asOther =
  process.getuid?.() !== 0
    ? []
    : Bun.which("setpriv")
      ? ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
      : undefined;

const CONFIG = [
  "# the service of the shop",
  "runScript: 'true' # nothing to build",
  "adminPort: 0",
  "",
  "# the end",
  "",
];
const read = (file: string) => readFileSync(file, "utf8");
const whoami = (admin: string, token: string) => fetch(`${admin}/api/whoami`, { headers: bearer(token) });

describe("service token", () => {
  test("add: a running server accepts the new token without a restart; list shows it without its value; revoke: refused from the next request", async () => {
    const repo = makeRepo();
    const config = join(repo.clone, "service.yaml");
    writeFileSync(config, CONFIG.join("\n"));
    await using server = await startAdmin(repo.clone, { SERVICE_ADMIN_PORT: undefined });

    const added = await runCli(["token", "add", "--name", "ci", "--role", "deploy", "--app", "default"], {
      cwd: repo.clone,
    });
    expect(added.code).toBe(0);
    const file = join(repo.clone, ".service", "tokens", "ci");
    const value = read(file).trim();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(added.stdout).not.toContain(value);
    expect(added.stdout).toContain(`its value is in ${file} (mode 0600)`);
    expect(added.stdout).toContain("no restart");
    // The entry is added; every comment and key stays where it was.
    expect(read(config)).toBe(
      [
        ...CONFIG.slice(0, 3),
        "tokens:",
        "  - { name: ci, role: deploy, apps: [ default ], file: .service/tokens/ci }",
        ...CONFIG.slice(3),
      ].join("\n"),
    );

    const answer = await waitFor(async () => {
      const res = await whoami(server.admin, value);
      return res.status === 200 ? res.json() : undefined;
    }, "the new token accepted");
    expect(answer).toEqual({ name: "ci", role: "deploy", apps: ["default"] });
    expect(server.proc.exitCode).toBeNull();

    const listed = await runCli(["token", "list"], { cwd: repo.clone });
    expect(listed.stdout.split("\n").slice(0, 2)).toEqual([
      "NAME  ROLE    APPS     FILE                AGE",
      "ci    deploy  default  .service/tokens/ci  0 min",
    ]);
    expect(listed.stdout).not.toContain(value);

    const revoked = await runCli(["token", "revoke", "ci"], { cwd: repo.clone });
    expect(revoked.code).toBe(0);
    expect((await whoami(server.admin, value)).status).toBe(401);
    expect(existsSync(file)).toBe(false);
    expect(read(config)).toBe([...CONFIG.slice(0, 3), "tokens: []", ...CONFIG.slice(3)].join("\n"));
    expect((await whoami(server.admin, ADMIN_TOKEN)).status).toBe(200);
  });

  test("bad names, duplicates, unknown apps and roles are refused with the reason, and nothing is written", async () => {
    const setup = tokenSetup();
    const before = read(join(setup.cwd, "service.yaml"));
    const refused = async (args: string[], reason: string) => {
      const out = await runCli(["token", "add", ...args], { cwd: setup.cwd });
      expect({ code: out.code, stderr: out.stderr.trim() }).toEqual({ code: 1, stderr: `[error] ${reason}` });
    };
    await refused(
      ["--name", "a b", "--role", "read"],
      'name must be 1 to 40 letters, digits, ".", "_" or "-", starting with a letter or digit',
    );
    await refused(
      ["--name", "admin", "--role", "read"],
      'token "admin": the name "admin" is the admin token\'s; choose another',
    );
    await refused(
      ["--name", "grafana", "--role", "read"],
      'a token named "grafana" exists already (service token revoke grafana removes it)',
    );
    await refused(["--name", "x", "--role", "root"], 'token "x": unknown role "root" (one of read, deploy, admin)');
    await refused(
      ["--name", "x", "--role", "deploy", "--app", "shop"],
      'token "x": unknown app "shop" in apps (the apps: web, api)',
    );
    await refused(["--name", "x"], "--role is required: one of read, deploy, admin");
    expect(read(join(setup.cwd, "service.yaml"))).toBe(before);
    expect(existsSync(join(setup.cwd, ".service", "tokens"))).toBe(false);
    const revoke = await runCli(["token", "revoke", "nobody"], { cwd: setup.cwd });
    expect(revoke.stderr.trim()).toBe('[error] no token named "nobody" (tokens: grafana, ci-web, ops)');
    // --app again for each app.
    const both = await runCli(["token", "add", "--name", "both", "--role", "deploy", "--app", "web", "--app=api"], {
      cwd: setup.cwd,
    });
    expect(both.code).toBe(0);
    expect(read(join(setup.cwd, "service.yaml"))).toContain(
      "  - { name: both, role: deploy, apps: [ web, api ], file: .service/tokens/both }\n",
    );
  });

  test.skipIf(asOther === undefined)(
    "with a config it cannot write: the token file, no config written, and the entry to add printed",
    async () => {
      const cwd = tempDir();
      const config = join(cwd, "service.yaml");
      writeFileSync(config, "runScript: 'true'\n");
      chmodSync(config, 0o444);
      chmodSync(cwd, 0o777);
      const out = await runProcess([...asOther!, ...CLI, "token", "add", "--name", "wall", "--role", "read"], {
        cwd,
        env: baseEnv(),
      });
      expect(out.code).toBe(0);
      expect(out.stdout).toContain(`and no config: ${config} is not writable (EACCES)`);
      expect(out.stdout).toContain("tokens:\n  - { name: wall, role: read, file: .service/tokens/wall }\n");
      expect(read(config)).toBe("runScript: 'true'\n");
      expect(statSync(join(cwd, ".service", "tokens", "wall")).mode & 0o777).toBe(0o600);
    },
  );

  test("with no config file: the token file, and the entry to add printed", async () => {
    const repo = makeRepo();
    const out = await runCli(["token", "add", "--name", "wall", "--role", "read"], {
      cwd: repo.clone,
      env: { SERVICE_SECRET: SECRET },
    });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("and no config: no config file");
    expect(out.stdout).toContain("tokens:\n  - { name: wall, role: read, file: .service/tokens/wall }\n");
    expect(readdirSync(repo.clone).filter((name) => name.startsWith("service"))).toEqual([]);
    expect(statSync(join(repo.clone, ".service", "tokens", "wall")).mode & 0o777).toBe(0o600);
  });

  test.skipIf(noPty)("on a terminal, add shows the value", async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, "service.yaml"), "runScript: 'true'\nadminPort: 0\n");
    await using pty = startInPty(cwd, {}, { args: ["token", "add", "--name", "wall", "--role", "read"] });
    await waitFor(() => pty.screen().includes("Authorization: Bearer"), "the value shown");
    const value = read(join(cwd, ".service", "tokens", "wall")).trim();
    expect(pty.screen()).toContain(`\n  ${value}\n`);
  });
});
