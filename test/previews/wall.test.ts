/**
 * docs/previews.md "The wall": a pull request's code runs as `previews.user` in a directory of the head's tracked
 * files (no `.git`), with an environment built from nothing. As root with a real user, a preview script that tries
 * to read the admin token, the envFile and the production clone's `.git/config` fails on each, and a request with a
 * forged proxy header to the admin listener gets nothing.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../_support/proxies.ts";
import { makeRepo, runCli, SECRET, startServer, tempDir, waitFor, type RunningServer } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";
import {
  deliverPullRequest,
  githubPullRequest,
  previewOf,
  previewsKey,
  pushPullHead,
} from "../_support/pull-requests.ts";

const USER = "service-preview";
// As root, with setpriv and useradd (util-linux, passwd) and curl for the probe of the admin listener.
const asRoot =
  process.getuid?.() === 0 && [Bun.which("setpriv"), Bun.which("useradd"), Bun.which("curl")].every(Boolean);
if (!asRoot) console.warn("the previews' wall tests skipped: they need root, setpriv, useradd and curl");
if (asRoot && Bun.spawnSync(["id", "-u", USER]).exitCode !== 0)
  Bun.spawnSync(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER]);

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

const PROBE = [
  "id -un > whoami.txt",
  'cat "$PROBE_TOKEN" > token.txt 2>/dev/null; echo "token=$?" >> probes.txt',
  'cat "$PROBE_ENVFILE" > envfile.txt 2>/dev/null; echo "envfile=$?" >> probes.txt',
  'cat "$PROBE_GIT" > git.txt 2>/dev/null; echo "git=$?" >> probes.txt',
  'curl -s -o admin.txt -w "%{http_code}" -H "Remote-User: admin" -H "Remote-Groups: admins" "$PROBE_ADMIN/api/apps" > admin-code.txt',
  "env | sort > env.txt",
  "ls -a > files.txt",
].join("\n");

describe.if(asRoot)("previews: the wall between a pull request and production", () => {
  test("as previews.user, nothing of production can be read; the environment holds none of it", async () => {
    const repo = makeRepo();
    chmodSync(repo.dir, 0o700);
    const cwd = tempDir();
    chmodSync(cwd, 0o755);
    const base = tempDir();
    chmodSync(base, 0o755);
    const envFile = join(cwd, "production.env");
    writeFileSync(envFile, "DATABASE_PASSWORD=hunter2\n", { mode: 0o600 });
    const adminPort = await freePort();
    const proxySecret = join(cwd, "proxy.secret");
    writeFileSync(proxySecret, "proxy-secret-0123456789abcdef\n", { mode: 0o600 });
    const previews = previewsKey(base, {
      user: USER,
      runScript: PROBE,
      env: {
        PROBE_TOKEN: join(cwd, ".service", "admin.token"),
        PROBE_ENVFILE: envFile,
        PROBE_GIT: join(repo.clone, ".git", "config"),
        PROBE_ADMIN: `http://127.0.0.1:${adminPort}`,
      },
    });
    writeServiceYaml(cwd, {
      secret: SECRET,
      repoPath: repo.clone,
      runScript: "echo production",
      path: "/hook",
      envFile,
      env: { PRODUCTION_ONLY: "prod-value" },
      adminPort,
      adminTrustedHeader: {
        header: "Remote-User",
        groupsHeader: "Remote-Groups",
        from: ["127.0.0.1/32", "::1/128"],
        secretFile: proxySecret,
        roles: { admin: ["admins"] },
      },
      previews,
    });
    const server = await startServer(cwd);
    servers.push(server);
    const head = pushPullHead(repo, 21);
    await deliverPullRequest(server, githubPullRequest(21, head));
    const preview = await waitFor(() => previewOf(cwd, 21, ["running", "failed"]), "the preview", 60_000);
    expect(preview.status).toBe("running");
    const dir = join(previews.path as string, "pr-21");
    const read = (name: string) => Bun.file(join(dir, name)).text();
    expect((await read("whoami.txt")).trim()).toBe(USER);
    const probes = (await read("probes.txt")).trim().split("\n");
    expect(probes).toHaveLength(3);
    for (const probe of probes) expect(probe).not.toMatch(/=0$/);
    expect(await read("token.txt")).toBe("");
    expect(await read("envfile.txt")).toBe("");
    expect(await read("git.txt")).toBe("");
    expect(await read("admin-code.txt")).toBe("401");
    const env = await read("env.txt");
    expect(env).toContain(`HOME=${dir}`);
    expect(env).toContain("SERVICE_PREVIEW=1");
    expect(env).toContain("SERVICE_PREVIEW_PORT=41000");
    expect(env).not.toContain("prod-value");
    expect(env).not.toContain("hunter2");
    expect(env).not.toContain(SECRET);
    expect(env).not.toContain("SERVICE_CONFIG");
    // The head's tracked files only: no .git, no link into the clone.
    expect(readdirSync(dir)).not.toContain(".git");
    expect(existsSync(join(dir, "README.md"))).toBe(true);
    expect(lstatSync(dir).uid).toBe(Number(Bun.spawnSync(["id", "-u", USER]).stdout.toString()));
  });

  test("service check names a service file previews.user can read", async () => {
    const repo = makeRepo();
    chmodSync(repo.dir, 0o700);
    const cwd = tempDir();
    chmodSync(cwd, 0o755);
    const envFile = join(cwd, "production.env");
    writeFileSync(envFile, "DATABASE_PASSWORD=hunter2\n", { mode: 0o644 });
    chmodSync(envFile, 0o644);
    writeServiceYaml(cwd, {
      secret: SECRET,
      repoPath: repo.clone,
      runScript: "echo production",
      envFile,
      previews: previewsKey(tempDir(), { user: USER }),
    });
    const result = await runCli(["check"], { cwd });
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain(`previews: user ${USER} can read the service's files: ${envFile}`);
    chmodSync(envFile, 0o600);
    const again = await runCli(["check"], { cwd });
    expect(again.stdout + again.stderr).not.toContain("can read the service's files");
  });
});
