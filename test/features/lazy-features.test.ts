/**
 * docs/architecture.md "Optional features": a server loads the code of a feature only once its configuration asks
 * for it (a dynamic import at the point of use), and the `node:` modules only features need with it. A server with no admin listener, no notifications or commit
 * statuses, no polling, no releases, no duplicate-delivery check, no watch and no sign-in of people (OpenID, a trusted proxy's
 * header) holds none of their modules; one with all of
 * them configured (the MCP endpoint too) loads them (the list below is what the check looks for, so it can tell).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../_support/proxies.ts";
import { makeRepo, ROOT, SECRET, tempDir } from "../_support/helpers.ts";
import { modulesOfServer } from "../_support/cli-modules.ts";

/** The modules of the optional features, by the feature that needs them. */
const FEATURE_MODULES: Record<string, RegExp> = {
  admin: /^(admin\/|features\/admin\.ts$)/,
  notifications: /^notify\//,
  email: /^notify\/channels\/email\.ts$/,
  polling: /^control\/poll\.ts$/,
  releases: /^releases\//,
  dedupe: /^http\/dedupe\.ts$/,
  // The age implementation (the age-encryption package) is imported by this module alone.
  age: /^config\/age-decrypt\.ts$/,
  mcp: /^mcp\//,
  oidc: /^people\/oidc\.ts$/,
  trustedHeader: /^people\/trusted-header\.ts$/,
  watch: /^(watch\/|deploy\/watched\.ts$)/,
  previews: /^previews\//,
};

/** The src/ modules a library server of `config` loaded after starting, one deploy, and stopping. */
function loadedBy(config: Record<string, unknown>): string[] {
  const run = Bun.spawnSync(
    [process.execPath, join(ROOT, "test/_support/loaded-modules.ts"), JSON.stringify(config), tempDir("service-lazy-")],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (run.exitCode !== 0) throw new Error(`the fixture failed: ${run.stderr.toString()}`);
  return run.stdout.toString().trim().split("\n");
}

/** Previews of pull requests, in a directory of their own. */
const previewsSettings = () => ({
  path: join(tempDir("service-previews-"), "previews"),
  url: "https://pr-{number}.p.example.com",
  ports: "41000-41010",
});

/** The modules a server of one app (a repository of its own, `runScript: true`) with `more` loaded. */
const loadedWith = (more: Record<string, unknown>) =>
  loadedBy({ secret: SECRET, repoPath: makeRepo().clone, runScript: "true", ...more });

const featuresIn = (modules: string[]) =>
  Object.entries(FEATURE_MODULES)
    .filter(([, pattern]) => modules.some((m) => pattern.test(m)))
    .map(([feature]) => feature);

describe('optional features are loaded when configured (docs/architecture.md "Optional features")', () => {
  test("a plain server (one app, no admin, notify, status, polling, releases, dedupe) loads none of their modules", () => {
    const repo = makeRepo();
    const modules = loadedBy({ secret: SECRET, repoPath: repo.clone, runScript: "true" });
    // It did load the webhook and the deploy: the list is the real one.
    expect(modules).toContain("http/webhook.ts");
    expect(modules).toContain("deploy/pipeline.ts");
    expect(featuresIn(modules)).toEqual([]);
  });

  test("a server with the admin listener alone loads neither sign-in of people (OpenID, a trusted proxy's header)", async () => {
    const modules = loadedWith({
      adminPort: await freePort(),
      adminHostname: "127.0.0.1",
    });
    const features = featuresIn(modules);
    expect(features).toContain("admin");
    expect(features.filter((feature) => feature === "oidc" || feature === "trustedHeader")).toEqual([]);
  });

  test("a server with every one of them configured loads each", async () => {
    const repo = makeRepo();
    // An age-encrypted envFile, made with the package's own encrypter, and the identity that opens it.
    const { Encrypter, generateX25519Identity, identityToRecipient } = await import("age-encryption");
    const secrets = tempDir("service-age-");
    const identity = await generateX25519Identity();
    writeFileSync(join(secrets, "key.txt"), `${identity}\n`, { mode: 0o600 });
    const encrypter = new Encrypter();
    encrypter.addRecipient(await identityToRecipient(identity));
    writeFileSync(join(secrets, "app.env.age"), await encrypter.encrypt("API_KEY=lazy-age-key-0123\n"));
    const secretFile = join(tempDir("service-lazy-secret-"), "secret");
    writeFileSync(secretFile, "a-secret-of-the-feature-0123456789\n", { mode: 0o600 });
    const roles = { claim: "groups", admin: ["ops"], deploy: {}, read: [] };
    const modules = loadedBy({
      secret: SECRET,
      repoPath: repo.clone,
      runScript: "true",
      adminPort: await freePort(),
      adminHostname: "127.0.0.1",
      notify: [
        { url: "http://127.0.0.1:9/hook", format: "json" },
        {
          format: "email",
          host: "127.0.0.1",
          port: 9,
          from: "a@example.com",
          to: ["b@example.com"],
          on: ["failed"], // the deploy fails (its releases path is not made): an email is sent
        },
      ],
      pollIntervalMs: 3_600_000,
      releases: { path: join(tempDir("service-releases-"), "releases") },
      dedupeDeliveries: true,
      envFile: join(secrets, "app.env.age"),
      ageIdentityFile: join(secrets, "key.txt"),
      adminMcp: "write",
      adminPublicUrl: "http://127.0.0.1:9/admin",
      adminOidc: { issuer: "http://127.0.0.1:9", clientId: "c", clientSecretFile: secretFile, name: "SSO", roles },
      adminTrustedHeader: { header: "Remote-User", from: ["127.0.0.1/32"], secretFile, roles },
      watch: { forMs: 200, intervalMs: 100, command: "true" },
      previews: previewsSettings(),
    });
    expect(featuresIn(modules).sort()).toEqual(Object.keys(FEATURE_MODULES).sort());
  });

  test("a server with a watch loads it for the deploy it watches (docs/watch.md)", () => {
    const modules = loadedWith({
      watch: { forMs: 200, intervalMs: 100, command: "true" },
    });
    expect(modules).toContain("watch/watch.ts");
    expect(modules).toContain("watch/command.ts");
    expect(featuresIn(modules)).toEqual(["watch"]);
  });

  test("a server with previews but no status holds no code that tells a pull request (docs/previews.md)", () => {
    const modules = loadedWith({
      previews: previewsSettings(),
    });
    // It did load the previews' builds and teardowns: the list is the real one.
    expect(modules).toContain("previews/manager.ts");
    expect(modules).toContain("previews/life.ts");
    expect(modules.filter((m) => /^previews\/(report|comment)[^/]*\.ts$/.test(m))).toEqual([]);
  });

  test("a server whose notifications are webhooks holds no email code (nodemailer comes with an email entry)", () => {
    const modules = loadedWith({
      notify: [{ url: "http://127.0.0.1:9/hook", format: "slack", on: ["succeeded"] }],
    });
    expect(modules).toContain("notify/channels/deliver.ts");
    expect(featuresIn(modules)).toEqual(["notifications"]);
  });

  test.skipIf(!!process.env.SERVICE_TEST_BIN)(
    "the CLI server of a plain configuration loads none of them, nor the start check's code (its problems are said by a process of its own)",
    async () => {
      const repo = makeRepo();
      const cwd = tempDir("service-cwd-");
      // A misspelt key: a problem the start check says, so the list is taken once the check has run.
      writeFileSync(join(cwd, "service.yaml"), `runScript: "true"\nrunSript: typo\n`);
      const env = {
        SERVICE_HOSTNAME: "127.0.0.1",
        SERVICE_PORT: String(await freePort()),
        SERVICE_SECRET: SECRET,
        SERVICE_REPO_PATH: repo.clone,
      };
      const modules = await modulesOfServer(cwd, env, 'did you mean "runScript"?');
      const ofSrc = modules.filter((m) => m.startsWith("src/")).map((m) => m.slice("src/".length));
      expect(ofSrc).toContain("ops/start-check.ts");
      expect(ofSrc.filter((m) => /^ops\/check/.test(m))).toEqual([]);
      expect(featuresIn(ofSrc)).toEqual([]);
      // Its config file is read by the runtime's YAML parser (config/yaml.ts): the yaml package stays out.
      expect(modules.filter((m) => m.startsWith("node_modules/yaml/"))).toEqual([]);
      // Nor the node: modules only features need (under Bun their JavaScript and its streams cost idle memory:
      // docs/performance.md): no module it loaded imports one (a type-only import is no load).
      const heavy =
        /^import (?!type )[^;]*from "node:(crypto|net|child_process|tty|readline|readline\/promises|http|stream)";/m;
      const importing = ofSrc.filter((m) => heavy.test(readFileSync(join(ROOT, "src", m), "utf8")));
      expect(importing).toEqual([]);
    },
  );

  test.skipIf(!!process.env.SERVICE_TEST_BIN)(
    "a server off a terminal loads none of the HTTPS question's code, though it is not told to skip it",
    async () => {
      const repo = makeRepo();
      const cwd = tempDir("service-cwd-");
      writeFileSync(join(cwd, "service.yaml"), `runScript: "true"\n`);
      const env = {
        SERVICE_HOSTNAME: "127.0.0.1",
        SERVICE_PORT: String(await freePort()),
        SERVICE_SECRET: SECRET,
        SERVICE_REPO_PATH: repo.clone,
        SERVICE_SKIP_HTTPS_PROMPT: "0",
      };
      const modules = await modulesOfServer(cwd, env);
      expect(modules).toContain("src/commands/serve.ts");
      expect(modules.filter((m) => /^src\/ops\/(https|proxy)/.test(m))).toEqual([]);
    },
  );
});
