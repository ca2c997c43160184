/**
 * docs/library.md "Library" under Node.js: the package, built and packed as it ships, installed into a plain Node project,
 * imported there and used for a real deploy, run by Node's own test runner. Then the other two ways to install
 * it, from a clone (a directory) and from a git URL, which must build dist/ themselves: the import under Node
 * and Bun, and the `service` command under Node with no Bun on PATH.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { git, makeRepo, readJson, ROOT, tempDir } from "../_support/helpers.ts";

const NAME: string = readJson(join(ROOT, "package.json")).name;

function run(argv: string[], cwd: string, env: Record<string, string> = {}) {
  const result = Bun.spawnSync(argv, {
    cwd,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: result.exitCode, out: `${result.stdout}${result.stderr}` };
}

/** A plain Node project (no dependencies yet). */
function nodeProject(): string {
  const project = tempDir("service-node-project-");
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "uses-service", private: true, type: "module" }));
  return project;
}

const NODE_TEST = `
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "node:http";
import { connect } from "node:net";
import { createServiceServer, ensureWebhookSecret, loadConfig } from "${NAME}";

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" };
/** A POST with no secret from \`localAddress\` (any 127.0.0.x on Linux); resolves to the status. */
const refusedFrom = (localAddress, port) =>
  new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: "POST", path: "/", localAddress }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
    req.end();
  });
const git = (cwd, ...args) => execFileSync("git", args, { cwd, env: gitEnv, stdio: "pipe" }).toString().trim();

test("createServiceServer serves and deploys under Node.js", async () => {
  const dir = mkdtempSync(join(tmpdir(), "service-node-"));
  git(dir, "init", "-q", "--bare", "--initial-branch=main", "remote.git");
  git(dir, "clone", "-q", "remote.git", "pusher");
  const pusher = join(dir, "pusher");
  git(pusher, "checkout", "-q", "-B", "main");
  writeFileSync(join(pusher, "app.txt"), "v1\\n");
  git(pusher, "add", "-A");
  git(pusher, "commit", "-q", "-m", "v1");
  git(pusher, "push", "-q", "origin", "main");
  git(dir, "clone", "-q", "remote.git", "app");
  const app = join(dir, "app");
  writeFileSync(join(pusher, "app.txt"), "v2\\n");
  git(pusher, "commit", "-q", "-am", "v2");
  git(pusher, "push", "-q", "origin", "main");
  const pushed = git(pusher, "rev-parse", "HEAD");

  const config = loadConfig({ cwd: app, env: { SERVICE_PORT: "0", SERVICE_RUN_SCRIPT: "echo deployed-by-node" } });
  assert.equal(config.runScript, "echo deployed-by-node");
  const secret = ensureWebhookSecret(config, app);
  assert.equal(secret.generated, true);
  const server = createServiceServer(config, { cwd: app });
  await server.start();
  assert.equal(server.listening, true);
  const unauthorized = await fetch(server.url + "/", { method: "POST" });
  assert.equal(unauthorized.status, 401);
  // The failed-authentication backoff: per client address under Node.js too, and never for the right secret.
  let status = 401;
  for (let i = 0; i < 100 && status === 401; i++) status = await refusedFrom("127.0.0.1", server.port);
  assert.equal(status, 429);
  assert.equal(await refusedFrom("127.0.0.2", server.port), 401);
  const res = await fetch(server.url + "/", { method: "POST", headers: { "x-service-secret": config.secret } });
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.match(text, /deployed-by-node/);
  assert.equal(text.trimEnd().split("\\n").pop(), "[done] ok=true exitCode=0");
  assert.equal(git(app, "rev-parse", "HEAD"), pushed);
  const json = await (await fetch(server.url + "/?format=json", { method: "POST", headers: { authorization: "Bearer " + config.secret } })).json();
  assert.equal(json.ok, true);
  assert.ok(existsSync(join(app, json.log.json)));
  await server.stop();
  assert.equal(server.listening, false);
  assert.ok(readdirSync(join(app, ".service", "logs")).length >= 4);

  // stop({ force: true }) kills a running deploy's process tree under Node.js too; the deploy ends ok=false.
  const seconds = String(3000 + Math.floor(Math.random() * 5000));
  const sleeping = () => readdirSync("/proc").filter((pid) => {
    try { return readFileSync("/proc/" + pid + "/cmdline", "utf8") === "sleep\\0" + seconds + "\\0"; } catch { return false; }
  });
  const forced = createServiceServer(loadConfig({ cwd: app, env: { SERVICE_PORT: "0", SERVICE_RUN_SCRIPT: "sleep " + seconds } }), { cwd: app });
  await forced.start();
  const running = fetch(forced.url + "/?format=json", { method: "POST", headers: { "x-service-secret": config.secret } });
  for (let i = 0; i < 500 && sleeping().length === 0; i++) await new Promise((done) => setTimeout(done, 20));
  assert.equal(sleeping().length, 1);
  await forced.stop({ force: true });
  assert.deepEqual(sleeping(), []);
  assert.equal((await (await running).json()).ok, false);
});

test("three POSTs pipelined on one connection under Node.js: the first gets its whole answer up to [done], then the connection closes; only that one deploys", async () => {
  const dir = mkdtempSync(join(tmpdir(), "service-node-pipe-"));
  git(dir, "init", "-q", "--initial-branch=main", "app");
  const app = join(dir, "app");
  writeFileSync(join(app, "app.txt"), "v1\\n");
  git(app, "add", "-A");
  git(app, "commit", "-q", "-m", "v1");
  const config = loadConfig({ cwd: app, env: { SERVICE_PORT: "0", SERVICE_SECRET: "pipelined-secret", SERVICE_RUN_SCRIPT: "echo ran" } });
  const server = createServiceServer(config, { cwd: app });
  await server.start();
  try {
    const request = "POST / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nX-Service-Secret: pipelined-secret\\r\\nContent-Length: 2\\r\\n\\r\\n{}";
    const raw = await new Promise((resolve, reject) => {
      const socket = connect(server.port, "127.0.0.1");
      const chunks = [];
      const timer = setTimeout(() => reject(new Error("no close within 30 s: " + Buffer.concat(chunks))), 30_000);
      socket.on("data", (data) => chunks.push(data));
      socket.on("error", () => {});
      socket.on("close", () => {
        clearTimeout(timer);
        resolve(Buffer.concat(chunks).toString("latin1"));
      });
      socket.on("connect", () => socket.write(request.repeat(3)));
    });
    assert.match(raw, /^HTTP\\/1\\.1 200/);
    assert.match(raw, /connection: close/i);
    assert.equal(raw.match(/\\[done\\] ok=true exitCode=0/g)?.length, 1);
    await server.idle();
    assert.equal(readdirSync(join(app, ".service", "logs")).filter((f) => f.endsWith(".json")).length, 1);
  } finally {
    await server.stop();
  }
});
`;

describe('the package under Node.js (docs/library.md "Library")', () => {
  let project = "";

  beforeAll(() => {
    const build = run([process.execPath, join(ROOT, "scripts/build.ts"), "--only-library"], ROOT);
    if (build.code !== 0) throw new Error(`build failed: ${build.out}`);
    const packDir = tempDir("service-pack-");
    const pack = run(["npm", "pack", "--silent", "--pack-destination", packDir], ROOT);
    if (pack.code !== 0) throw new Error(`npm pack failed: ${pack.out}`);
    const tarball = join(packDir, pack.out.trim().split("\n").pop()!.trim());
    project = nodeProject();
    const install = run(["npm", "install", "--no-audit", "--no-fund", "--prefer-offline", tarball], project);
    if (install.code !== 0) throw new Error(`npm install failed: ${install.out}`);
    writeFileSync(join(project, "deploy.test.mjs"), NODE_TEST);
  }, 120_000);

  test("the installed package ships the Node.js build (node:http, no Bun API) and its type declarations", () => {
    const installed = join(project, "node_modules", NAME);
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    expect(existsSync(join(installed, manifest.exports["."].node))).toBe(true);
    expect(existsSync(join(installed, manifest.exports["."].types))).toBe(true);
    const bundle = readFileSync(join(installed, manifest.exports["."].node), "utf8");
    expect(bundle).toContain("node:http");
    expect(bundle).not.toContain("Bun.serve");
  });

  test("node --test imports the package and runs a real deploy through it, and one pipelined behind it is not run unanswered", () => {
    const result = run(["node", "--test", "deploy.test.mjs"], project);
    expect(result.out).toContain("# pass 2");
    expect(result.code).toBe(0);
  }, 60_000);
});

/** This checkout as a fresh clone would have it: its files (tracked and new, nothing ignored) committed to a new repo. */
function cloneOfThisTree(): string {
  const clone = join(tempDir("service-clone-"), "service");
  const files = Bun.spawnSync(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
    stdout: "pipe",
  });
  for (const file of files.stdout.toString().split("\0").filter(Boolean)) {
    if (existsSync(join(ROOT, file))) cpSync(join(ROOT, file), join(clone, file), { recursive: true });
  }
  git(clone, "init", "-q", "--initial-branch=main");
  git(clone, "add", "-A");
  git(clone, "commit", "-q", "-m", "clone");
  expect(existsSync(join(clone, "dist"))).toBe(false);
  expect(existsSync(join(clone, "node_modules"))).toBe(false);
  return clone;
}

/** A PATH with Node and npm but no Bun (the machine of someone who installs the package). */
const NO_BUN_PATH = [...new Set([dirname(realpathSync(Bun.which("node")!)), "/usr/bin", "/bin"])].join(":");

/** The import works under Node and Bun, and `npx service` runs a deploy under Node with no Bun on PATH. */
function expectWorkingInstall(project: string): void {
  const imported = `import("${NAME}").then((m) => console.log(typeof m.createServiceServer, typeof m.loadConfig, typeof m.ensureWebhookSecret))`;
  const node = run(["node", "-e", imported], project);
  expect(node.out.trim()).toBe("function function function");
  const bun = run([process.execPath, "-e", imported], project);
  expect(bun.out.trim()).toBe("function function function");

  expect(run(["sh", "-c", "command -v bun"], project, { PATH: NO_BUN_PATH }).code).not.toBe(0);
  const version = run(["npx", "--no-install", "service", "--version"], project, { PATH: NO_BUN_PATH });
  expect(version.out).toContain(readJson(join(ROOT, "package.json")).version);
  expect(version.code).toBe(0);
  const repo = makeRepo();
  const deploy = run([join(project, "node_modules", ".bin", "service"), "deploy"], repo.clone, {
    PATH: NO_BUN_PATH,
    SERVICE_RUN_SCRIPT: "echo deployed-by-the-node-cli",
  });
  expect(deploy.out).toContain("deployed-by-the-node-cli");
  expect(deploy.out).toContain("[done] ok=true exitCode=0");
  expect(deploy.code).toBe(0);

  // The systemd unit it prints starts it the same way, and that command line runs.
  const unit = run([join(project, "node_modules", ".bin", "service"), "systemd", "--user", "root"], repo.clone, {
    PATH: NO_BUN_PATH,
  });
  expect(unit.code).toBe(0);
  const execStart = /^ExecStart=(.+)$/m.exec(unit.out)![1]!.split(" ");
  expect(execStart[0]).toBe(realpathSync(Bun.which("node", { PATH: NO_BUN_PATH })!));
  const started = run([...execStart, "--version"], repo.clone, { PATH: NO_BUN_PATH });
  expect(started.out.trim()).toBe(readJson(join(ROOT, "package.json")).version);
  expect(started.code).toBe(0);
}

describe("installing from a clone or a git URL (dist/ is not in git: the install builds it)", () => {
  test("npm install <clone directory> builds dist/ in the clone: the import works under Node and Bun, `service` under Node without Bun", () => {
    const clone = cloneOfThisTree();
    const project = nodeProject();
    const install = run(["npm", "install", "--no-audit", "--no-fund", "--prefer-offline", clone], project);
    expect(install.out).not.toContain("ERR");
    expect(install.code).toBe(0);
    expect(existsSync(join(clone, "dist", "node", "index.js"))).toBe(true);
    expectWorkingInstall(project);
  }, 180_000);

  test("npm install git+file://<clone> builds dist/: the import works under Node and Bun, `service` under Node without Bun", () => {
    const clone = cloneOfThisTree();
    const project = nodeProject();
    const install = run(
      ["npm", "install", "--no-audit", "--no-fund", "--prefer-offline", `git+file://${clone}`],
      project,
    );
    expect(install.out).not.toContain("ERR");
    expect(install.code).toBe(0);
    expect(existsSync(join(project, "node_modules", NAME, "dist", "node", "index.js"))).toBe(true);
    expectWorkingInstall(project);
  }, 180_000);
});
