/**
 * docs/examples/canary and docs/examples/docker-compose, run as written by real service processes: the canary pair
 * against a local contract fake of GitHub's commit statuses (github-checks.ts), the Compose stack with a `docker`
 * stub on PATH that records its arguments (the real run is the example's README).
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { exampleScripts, installConfig, stubs } from "../_support/examples.ts";
import { StreamReader } from "../_support/gate.ts";
import { githubChecks } from "../_support/github-checks.ts";
import { git, lastLine, makeRepo, post, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";

const OK = "[done] ok=true exitCode=0";
const TOKEN = "status-token-of-deploy-bot-0123";

describe("docs/examples", () => {
  test("canary: web-2 deploys a commit only once web-1 reported it deployed and it baked", async () => {
    // The fake's repository is acme/web, the example's.
    const repo = makeRepo({ "README.md": "web\n", ...exampleScripts("canary") });
    const forge = githubChecks({ [TOKEN]: "deploy-bot" });
    const tokenFile = join(tempDir(), "status-token");
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    const systemctl = stubs(["systemctl"]);
    const server = async (name: "web-1" | "web-2") => {
      const dir = tempDir(`service-${name}-`);
      git(dir, "clone", "--quiet", repo.remote, "app");
      const replace: [string, string][] = [
        ["/srv/web/app", join(dir, "app")],
        ["/etc/service/status-token", tokenFile],
        // The forge is the local fake.
        [`  context: deploy/${name}`, `  apiUrl: ${forge.url}\n  context: deploy/${name}`],
      ];
      // The bake a second instead of ten minutes.
      if (name === "web-2") replace.push(["bakeMs: 600000", "bakeMs: 1000"]);
      installConfig(`canary/${name}/service.yaml`, join(dir, "service"), replace);
      const started = await startServer(join(dir, "service"), { SERVICE_SECRET: SECRET, PATH: systemctl.PATH });
      return Object.assign(started, { head: () => git(join(dir, "app"), "rev-parse", "HEAD") });
    };
    await using web1 = await server("web-1");
    await using web2 = await server("web-2");

    const commit = repo.push({ "index.html": "v2\n" });
    forge.status(commit, "ci/build", "success", "ci-bot");
    const second = new StreamReader(await post(web2.url, { secret: SECRET }));
    await waitFor(() => second.text.includes("[gate] waiting for"), "web-2 waiting for the canary");
    expect(web2.head()).not.toBe(commit);

    expect(lastLine(await (await post(web1.url, { secret: SECRET })).text())).toBe(OK);
    expect(web1.head()).toBe(commit);
    await second.done;
    expect(second.text).toMatch(/deploy\/web-1 by deploy-bot success on [0-9a-f]{12}; baked 1 s/);
    expect(lastLine(second.text)).toBe(OK);
    expect(web2.head()).toBe(commit);
    await waitFor(
      () => forge.written.some((w) => w.sha === commit && w.context === "deploy/web-2" && w.state === "success"),
      "web-2's own status",
    );
    expect(systemctl.calls()).toEqual(["systemctl restart web", "systemctl restart web"]);
    expect(forge.refused).toEqual([]);
  });

  test("docker-compose: docker compose pull, then up -d --wait", async () => {
    const repo = makeRepo({ "compose.yaml": "services: {}\n" });
    const cwd = tempDir("service-example-");
    installConfig("docker-compose/service.yaml", cwd, [["/srv/stack", repo.clone]]);
    const docker = stubs(["docker"]);
    await using server = await startServer(cwd, { SERVICE_SECRET: SECRET, PATH: docker.PATH });

    repo.push({ "compose.yaml": "services: { web: { image: 'ghcr.io/acme/web:main' } }\n" });
    const text = await (await post(server.url, { secret: SECRET })).text();
    expect(lastLine(text)).toBe(OK);
    expect(docker.calls()).toEqual(["docker compose pull", "docker compose up -d --wait --remove-orphans"]);
  });
});
