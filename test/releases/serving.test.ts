/**
 * docs/releases.md "Serving `current`": the docs' nginx snippet, run as the docs give it against a real release,
 * serves the app's public files and never the release's `.env` (a link into `shared/`) nor its `.git`.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { docBlock } from "../_support/doc-snippets.ts";
import { tempDir } from "../_support/helpers.ts";
import { freePort, nginx, nginxMain, startNginx } from "../_support/proxy-helpers.ts";
import { deployStreamed, makeReleasesSite } from "../_support/release-helpers.ts";
import { startServer, waitFor } from "../_support/helpers.ts";

describe('serving current (docs/releases.md "Serving `current`")', () => {
  test.skipIf(!nginx)("the docs' nginx root serves current/public, never the release's .env or .git", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n" }, { SERVICE_RELEASES_SHARED: ".env" });
    await using server = await startServer(s.cwd, s.env);
    const deployed = await deployStreamed(server.url, s.cwd);
    expect(deployed.result.ok).toBe(true);
    writeFileSync(join(s.site, "shared", ".env"), "DB_PASSWORD=hunter2\n");

    const port = await freePort();
    const snippet = docBlock("docs/releases.md", "nginx", "Serving `current`")
      .replace("listen 80;", `listen 127.0.0.1:${port};`)
      .replaceAll("/srv/app", s.site);
    const prefix = tempDir("service-nginx-");
    const site = join(prefix, "site.conf");
    const main = join(prefix, "nginx.conf");
    writeFileSync(site, snippet);
    writeFileSync(main, nginxMain(prefix, site));
    await using proxy = startNginx(prefix, main);
    const get = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { host: "app.example.com" } });
      return { status: res.status, body: await res.text() };
    };
    await waitFor(async () => {
      if (proxy.proc.exitCode !== null) throw new Error(`nginx exited: ${proxy.output()}`);
      return (await get("/index.html").catch(() => ({ status: 0 }))).status === 200;
    }, "nginx to serve the release");
    expect(await get("/index.html")).toEqual({ status: 200, body: "v1\n" });
    for (const path of ["/.env", "/.git", "/../.env", "/%2e%2e/.env"]) expect((await get(path)).status).toBe(404);
  });
});
