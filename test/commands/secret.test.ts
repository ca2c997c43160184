/**
 * `service secret show|rotate [--app NAME]` and `service admin-token rotate` (docs/cli.md "Secrets and the admin
 * token"): a generated secret is shown or replaced (0600, atomic), the running service uses a new one from its
 * next request without a restart, and a secret the configuration sets is changed where it is set.
 */
import { readAudit } from "../../src/audit/read.ts";
import { auditDir } from "../../src/audit/trail.ts";
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { adminUrl } from "../_support/admin-helpers.ts";
import { lastLine, makeRepo, post, runCli, SECRET, startServer, tempDir } from "../_support/helpers.ts";
import { baseEnv, CLI } from "../_support/repo.ts";
import { postAs, writeServiceYaml } from "../_support/webhook-fixtures.ts";

const read = (file: string) => readFileSync(file, "utf8").trim();
const DONE_OK = "[done] ok=true exitCode=0";

describe('service secret (docs/cli.md "Secrets and the admin token")', () => {
  test("single app: show prints the generated secret; rotate replaces it (0600) and the running server takes the new one at once", async () => {
    const repo = makeRepo();
    const env = { SERVICE_RUN_SCRIPT: "echo deployed" };
    await using server = await startServer(repo.clone, env);
    const file = join(repo.clone, ".service.secret");
    const old = read(file);

    const shown = await runCli(["secret", "show"], { cwd: repo.clone, env });
    expect({ code: shown.code, stdout: shown.stdout }).toEqual({ code: 0, stdout: `${old}\n` });

    const rotated = await runCli(["secret", "rotate"], { cwd: repo.clone, env });
    expect(rotated.code).toBe(0);
    const fresh = read(file);
    expect(fresh).not.toBe(old);
    expect(fresh.length).toBeGreaterThanOrEqual(43);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Off a terminal (a pipe, a journal) the value is not printed: where it is, and the command that reads it.
    expect(rotated.stdout).not.toContain(fresh);
    expect(rotated.stdout).toContain(`read it with: service secret show`);
    expect(rotated.stdout).toContain("Secret field");
    expect(rotated.stdout).toContain("Secret token (GitLab)");

    expect((await post(server.url, { secret: old })).status).toBe(401);
    expect(lastLine(await (await post(server.url, { secret: fresh })).text())).toBe(DONE_OK);
  });

  test("multi-app: --app names the app; its rotated secret applies at once, the other app's stays", async () => {
    const [web, api] = [makeRepo(), makeRepo()];
    const cwd = tempDir("service-apps-");
    writeServiceYaml(cwd, {
      apps: [
        { name: "web", host: "web.example.com", path: "/hook", repoPath: web.clone, runScript: "echo web" },
        {
          name: "api",
          host: "api.example.com",
          path: "/hook",
          repoPath: api.clone,
          runScript: "echo api",
          secret: SECRET,
        },
      ],
    });
    await using server = await startServer(cwd);
    const file = join(cwd, ".service", "secrets", "web.secret");
    const old = read(file);

    const unnamed = await runCli(["secret", "rotate"], { cwd });
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr).toContain("--app (apps: web, api)");
    expect((await runCli(["secret", "show", "--app", "web"], { cwd })).stdout).toBe(`${old}\n`);

    expect((await runCli(["secret", "rotate", "--app", "web"], { cwd })).code).toBe(0);
    const fresh = read(file);
    expect(fresh).not.toBe(old);
    expect((await postAs(server.url, "web.example.com", "/hook", { secret: old })).status).toBe(401);
    const deployed = await postAs(server.url, "web.example.com", "/hook", { secret: fresh });
    expect(lastLine(await deployed.text())).toBe(DONE_OK);
    const other = await postAs(server.url, "api.example.com", "/hook", { secret: SECRET });
    expect(lastLine(await other.text())).toBe(DONE_OK);

    // The api app's secret is in the config file: it is changed there.
    const configured = await runCli(["secret", "rotate", "--app", "api"], { cwd });
    expect(configured.code).toBe(1);
    expect(configured.stderr).toContain(`its apps entry in ${join(cwd, "service.yaml")}`);
  });

  test("a secret set by SERVICE_SECRET or the config file is refused, naming where to change it", async () => {
    const repo = makeRepo();
    const fromEnv = await runCli(["secret", "rotate"], { cwd: repo.clone, env: { SERVICE_SECRET: SECRET } });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toContain("SERVICE_SECRET in the service's environment");
    const cwd = tempDir("service-home-");
    writeServiceYaml(cwd, { repoPath: repo.clone, secret: SECRET });
    const fromFile = await runCli(["secret", "show"], { cwd });
    expect(fromFile.code).toBe(1);
    expect(fromFile.stderr).toContain(`the secret key of ${join(cwd, "service.yaml")}`);
    expect(fromFile.stdout + fromFile.stderr).not.toContain(SECRET);
  });
});

describe('service admin-token rotate (docs/cli.md "Secrets and the admin token")', () => {
  test("replaces the generated token: the running listener refuses the old one and ends its sessions at once", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: SECRET, SERVICE_ADMIN_PORT: "0" };
    await using server = await startServer(repo.clone, env);
    const admin = adminUrl(server);
    const file = join(repo.clone, ".service", "admin.token");
    const old = read(file);
    const login = await fetch(`${admin}/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `token=${old}`,
      redirect: "manual",
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const apps = (headers: Record<string, string>) => fetch(`${admin}/api/apps`, { headers }).then((r) => r.status);
    expect(await apps({ cookie })).toBe(200);

    const rotated = await runCli(["admin-token", "rotate"], { cwd: repo.clone, env });
    expect(rotated.code).toBe(0);
    const fresh = read(file);
    expect(fresh).not.toBe(old);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(rotated.stdout).not.toContain(fresh);
    expect(rotated.stdout).toContain(`read it with: cat ${file}`);

    expect(await apps({ authorization: `Bearer ${old}` })).toBe(401);
    expect(await apps({ cookie })).toBe(401);
    expect(await apps({ authorization: `Bearer ${fresh}` })).toBe(200);
    // The audit trail: who rotated it (the command), and the service seeing it; neither value in it.
    const lines = readAudit(auditDir(repo.clone)).filter((l) => l.action === "token rotated");
    expect(lines.map((l) => [l.actor.split(":")[0], l.target])).toEqual([
      ["cli", "admin"],
      ["service", "admin"],
    ]);
    const trail = JSON.stringify(readAudit(auditDir(repo.clone)));
    expect(trail).not.toContain(old);
    expect(trail).not.toContain(fresh);
  });

  test("a token set by SERVICE_ADMIN_TOKEN is refused, naming where to change it", async () => {
    const repo = makeRepo();
    const result = await runCli(["admin-token", "rotate"], {
      cwd: repo.clone,
      env: { SERVICE_ADMIN_TOKEN: "admin-token-0123456789abcdef" },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("SERVICE_ADMIN_TOKEN in the service's environment");
  });
});

const noPty = process.platform !== "linux" || Bun.which("script") === null;

describe("a rotated secret is printed on a terminal only", () => {
  test.skipIf(noPty)(
    "service secret rotate and service admin-token rotate on a terminal print the new value",
    async () => {
      const repo = makeRepo();
      writeServiceYaml(repo.clone, { runScript: "true" });
      const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
      const onTerminal = async (...args: string[]) => {
        const proc = Bun.spawn(["script", "-qfec", `exec ${[...CLI, ...args].map(quote).join(" ")}`, "/dev/null"], {
          cwd: repo.clone,
          env: baseEnv({}),
          stdin: "pipe",
          stdout: "pipe",
          stderr: "pipe",
        });
        const screen = await new Response(proc.stdout).text();
        expect(await proc.exited).toBe(0);
        return screen;
      };
      const secret = await onTerminal("secret", "rotate");
      expect(secret).toContain(read(join(repo.clone, ".service.secret")));
      const token = await onTerminal("admin-token", "rotate");
      expect(token).toContain(read(join(repo.clone, ".service", "admin.token")));
    },
  );
});
