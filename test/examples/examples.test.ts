/**
 * docs/examples/: the Node app with releases, the monorepo and the tag-released app, each run as written by a real
 * service process against real git repositories (`systemctl` a stub on PATH that records its arguments).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { currentRelease } from "../_support/release-helpers.ts";
import { exampleScripts, installConfig, pushTag, stubs } from "../_support/examples.ts";
import { git, lastLine, makeRepo, makeRepoIn, post, SECRET, startServer, tempDir } from "../_support/helpers.ts";
import { postAs } from "../_support/webhook-fixtures.ts";

const OK = "[done] ok=true exitCode=0";

/** A Node app: a build that needs its file: dependency installed, and the package of that dependency. */
const NODE_APP = {
  "package.json": JSON.stringify({
    name: "shop",
    version: "1.0.0",
    private: true,
    scripts: { build: "node build.js" },
    dependencies: { greet: "file:lib/greet" },
  }),
  "build.js":
    "const fs = require('node:fs');\nfs.mkdirSync('dist', { recursive: true });\nfs.writeFileSync('dist/index.html', require('greet')());\n",
  "lib/greet/package.json": JSON.stringify({ name: "greet", version: "1.0.0", main: "index.js" }),
  "lib/greet/index.js": "module.exports = () => 'hello from the release';\n",
  ".gitignore": "node_modules/\ndist/\n",
};

describe("docs/examples", () => {
  test("node-releases: npm install in a release, node_modules carried from the live one, restarted, health-checked", async () => {
    const srv = join(tempDir("service-example-"), "srv", "shop");
    const repo = makeRepoIn(join(srv, "repo-fixture"), { ...NODE_APP, ...exampleScripts("node-releases") });
    mkdirSync(join(srv, "site"));
    // The app the health check asks: up once its release is live.
    const app = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("up") });
    using _app = { [Symbol.dispose]: () => app.stop(true) };
    installConfig("node-releases/service.yaml", srv, [
      ["/srv/shop/repo", repo.clone],
      ["/srv/shop", srv],
      ["http://127.0.0.1:3000/up", `http://127.0.0.1:${app.port}/up`],
    ]);
    const systemctl = stubs(["systemctl"]);
    const env = { SERVICE_SECRET: SECRET, PATH: systemctl.PATH, npm_config_update_notifier: "false" };
    await using server = await startServer(srv, env);

    const first = await (await post(server.url, { secret: SECRET })).text();
    expect(lastLine(first)).toBe(OK);
    expect(first).toContain("[release] carry: no live release yet: nothing to carry");
    const current = join(srv, "site", "current");
    expect(readFileSync(join(current, "dist", "index.html"), "utf8")).toBe("hello from the release");
    expect(lstatSync(join(current, "node_modules", "greet")).isSymbolicLink()).toBe(true);
    expect(first).toMatch(/\[health\] healthy after/);

    repo.push({ "lib/greet/index.js": "module.exports = () => 'hello again';\n" });
    const second = await (await post(server.url, { secret: SECRET })).text();
    expect(lastLine(second)).toBe(OK);
    expect(second).toMatch(/\[release\] carried node_modules \(\d+ files?, [^)]*\) from \S+/);
    expect(readFileSync(join(current, "dist", "index.html"), "utf8")).toBe("hello again");
    expect(currentRelease(join(srv, "site"))).toContain(repo.head().slice(0, 12));
    expect(systemctl.calls()).toEqual(["systemctl restart shop", "systemctl restart shop"]);
  });

  test("monorepo: each app deploys only when a push touches its paths", async () => {
    const dir = tempDir("service-example-");
    const repo = makeRepo({
      "apps/web/index.html": "web 1\n",
      "apps/api/main.txt": "api 1\n",
      "packages/ui/button.txt": "ui 1\n",
      ...exampleScripts("monorepo"),
    });
    const mono = join(dir, "srv", "mono");
    mkdirSync(mono, { recursive: true });
    for (const app of ["web", "api"]) git(mono, "clone", "--quiet", repo.remote, app);
    const cwd = join(dir, "service");
    installConfig("monorepo/service.yaml", cwd, [["/srv/mono", mono]]);
    const systemctl = stubs(["systemctl"]);
    await using server = await startServer(cwd, { PATH: systemctl.PATH });
    const secret = (app: string) => readFileSync(join(cwd, ".service", "secrets", `${app}.secret`), "utf8").trim();
    const deploy = async (app: string) =>
      (
        await postAs(server.url, undefined, `/${app}`, {
          secret: secret(app),
          headers: { "x-forwarded-host": "deploy.example.com" },
        })
      ).text();

    // The first deploy of each app: every push deploys until an app has a live commit.
    for (const app of ["web", "api"]) expect(lastLine(await deploy(app))).toBe(OK);
    const pushed = repo.push({ "apps/web/index.html": "web 2\n" });
    const web = await deploy("web");
    expect(lastLine(web)).toBe(OK);
    expect(web).toContain(`deployed web at ${pushed.slice(0, 7)}`);
    expect(await deploy("api")).toMatch(/^\[skipped\] no change under apps\/api\/\*\*, packages\/ui\/\*\* since /);
    expect(git(join(mono, "api"), "rev-parse", "HEAD")).not.toBe(pushed);
    expect(systemctl.calls()).toEqual(["systemctl restart web", "systemctl restart api", "systemctl restart web"]);
  });

  test("tag-releases: the highest tag within ^1.2 deploys, never 2.0.0 nor a branch", async () => {
    const repo = makeRepo({ "README.md": "api\n", ...exampleScripts("tag-releases") });
    const cwd = tempDir("service-example-");
    installConfig("tag-releases/service.yaml", cwd, [["/srv/api/app", repo.clone]]);
    const tagged: Record<string, string> = {};
    for (const tag of ["v1.2.0", "v1.3.1", "v2.0.0"]) {
      tagged[tag] = repo.push({ VERSION: `${tag}\n` }, `release ${tag}`);
      pushTag(repo, tag);
    }
    const systemctl = stubs(["systemctl"]);
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET, PATH: systemctl.PATH });

    const first = await (await post(server.url, { secret: SECRET })).text();
    expect(lastLine(first)).toBe(OK);
    expect(first).toContain(`deploying ${tagged["v1.3.1"]!.slice(0, 7)}`);
    expect(repo.head()).toBe(tagged["v1.3.1"]!);

    tagged["v1.4.0"] = repo.push({ VERSION: "v1.4.0\n" }, "release v1.4.0");
    pushTag(repo, "v1.4.0");
    expect(lastLine(await (await post(server.url, { secret: SECRET })).text())).toBe(OK);
    expect(repo.head()).toBe(tagged["v1.4.0"]!);
    expect(existsSync(join(repo.clone, "VERSION"))).toBe(true);
    expect(systemctl.calls()).toEqual(["systemctl restart api", "systemctl restart api"]);
  });
});
