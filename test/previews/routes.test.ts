/**
 * docs/previews.md "Routing": after each change the service writes `.service/previews/routes.json` and a Caddyfile
 * snippet (host → port of each running preview; a host outside `[a-z0-9.-]` or a port that is no port is left out
 * and said), then runs `previews.onChange` with the routes file. Debian's Caddy, run with the snippet, sends a
 * preview's host to the app on its port.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CADDY_FILE, PREVIEWS_DIR, previewsChanged, ROUTES_FILE } from "../../src/previews/routes.ts";
import type { Preview, PreviewSettings } from "../../src/previews/types.ts";
import { tempDir, waitFor } from "../_support/helpers.ts";
import { previewSettings } from "../_support/preview-reports.ts";
import { freePort, noCaddy, startCaddy } from "../_support/proxy-helpers.ts";

if (noCaddy) console.warn("caddy is not installed: the Caddy routing test is skipped (apt-get install caddy)");

function preview(number: number, port: number, url: string, status: Preview["status"] = "running"): Preview {
  return {
    app: "web",
    forge: "github",
    number,
    title: `PR ${number}`,
    branch: `feature-${number}`,
    slug: `feature-${number}`,
    head: "a".repeat(40),
    port,
    url,
    dir: `/srv/previews/pr-${number}`,
    created: "2026-11-28T10:00:00Z",
    updated: "2026-11-28T10:00:00Z",
    status,
  };
}

/** The reports' settings (preview-reports.ts), with `onChange` when given. */
function settings(onChange?: string): PreviewSettings {
  return { ...previewSettings(), ...(onChange ? { onChange } : {}) };
}

/** A logger that keeps what it is told. */
function recorder() {
  const lines: string[] = [];
  const say = (level: string) => (message: unknown) => lines.push(`${level} ${String(message)}`);
  return { lines, logger: { info: say("info"), warn: say("warn"), error: say("error") } as never };
}

const files = (cwd: string) => ({
  routes: join(cwd, PREVIEWS_DIR, ROUTES_FILE),
  caddy: join(cwd, PREVIEWS_DIR, CADDY_FILE),
});

describe("previews' routing", () => {
  test("routes.json and the Caddy snippet name each running preview's host and port, and nothing else", async () => {
    const cwd = tempDir();
    const { lines, logger } = recorder();
    await previewsChanged(
      cwd,
      [
        preview(7, 4107, "https://pr-7.preview.example.com"),
        preview(8, 4108, "https://pr-8.preview.example.com/app/", "building"),
        preview(9, 4109, "https://pr-9.preview.example.com", "stopped"),
        preview(10, 4110, "https://pr-10.preview.example.com", "failed"),
      ],
      [settings()],
      { logger },
    );
    const { routes, caddy } = files(cwd);
    expect(JSON.parse(readFileSync(routes, "utf8")).hosts).toEqual({
      "pr-7.preview.example.com": 4107,
      "pr-8.preview.example.com": 4108,
    });
    const snippet = readFileSync(caddy, "utf8");
    expect(snippet).toContain("https://pr-7.preview.example.com {\n\treverse_proxy 127.0.0.1:4107\n}");
    expect(snippet).toContain("https://pr-8.preview.example.com {\n\treverse_proxy 127.0.0.1:4108\n}");
    expect(snippet).not.toContain("pr-9");
    expect(snippet).not.toContain("pr-10");
    expect(lines).toEqual([]);
    // Written whole, by a rename: no temp file left beside them.
    expect(statSync(routes).isFile()).toBe(true);
  });

  test("a host outside [a-z0-9.-], a port that is no port and a second preview of one host are left out and said", async () => {
    const cwd = tempDir();
    const { lines, logger } = recorder();
    await previewsChanged(
      cwd,
      [
        preview(1, 4101, "https://ok.preview.example.com"),
        preview(2, 4102, "https://a}b.preview.example.com"),
        preview(3, 4103.5, "https://three.preview.example.com"),
        preview(4, 4104, "https://ok.preview.example.com"),
        preview(5, 4105, "not a url"),
        preview(6, 4106, "https://[::1]/"),
        preview(7, 4107, "https://EVIL.example.com {\n}\n:80 {\n  respond 1\n"),
      ],
      [settings()],
      { logger },
    );
    const { routes, caddy } = files(cwd);
    expect(JSON.parse(readFileSync(routes, "utf8")).hosts).toEqual({ "ok.preview.example.com": 4101 });
    const snippet = readFileSync(caddy, "utf8");
    expect(snippet.match(/reverse_proxy/g)).toHaveLength(1);
    expect(snippet).not.toContain("respond");
    const said = lines.join("\n");
    for (const n of [2, 3, 4, 5, 6]) expect(said).toContain(`web #${n}:`);
    expect(lines.every((line) => line.startsWith("warn previews: not routed: "))).toBe(true);
  });

  test("a preview that is no preview at all is logged, never thrown", async () => {
    const cwd = tempDir();
    const { lines, logger } = recorder();
    const broken = { status: "running", port: 4100, url: 42 } as unknown as Preview;
    await previewsChanged(cwd, [broken], [settings()], { logger });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith("warn previews: not routed: ");
  });

  test("onChange runs after the files are written, with the routes file as its argument and in its environment", async () => {
    const cwd = tempDir();
    const seen = join(cwd, "seen.txt");
    const command = `{ echo "$1"; echo "$SERVICE_PREVIEW_ROUTES"; echo "$SERVICE_PREVIEW_CADDY"; cat "$1"; } > ${seen}`;
    await previewsChanged(cwd, [preview(7, 4107, "https://pr-7.preview.example.com")], [settings(command)]);
    const { routes, caddy } = files(cwd);
    const [arg, env, caddyEnv, ...rest] = readFileSync(seen, "utf8").split("\n");
    expect(arg).toBe(routes);
    expect(env).toBe(routes);
    expect(caddyEnv).toBe(caddy);
    expect(JSON.parse(rest.join("\n")).hosts).toEqual({ "pr-7.preview.example.com": 4107 });
  });

  test("a failing onChange is logged, never thrown; one that outlasts its time is stopped and logged", async () => {
    const cwd = tempDir();
    const { lines, logger } = recorder();
    await previewsChanged(cwd, [], [settings("echo broken >&2; exit 3")], { logger });
    expect(lines).toEqual(["error previews: onChange failed (exit code 3): broken"]);
    lines.length = 0;
    await previewsChanged(cwd, [], [settings("sleep 30")], { logger, timeoutMs: 200 });
    expect(lines).toEqual(["error previews: onChange did not end within 200 ms and was stopped"]);
  });

  test.skipIf(noCaddy)(
    "Caddy run with the written snippet sends a preview's host to the app on its port",
    async () => {
      const cwd = tempDir();
      const home = tempDir("service-caddy-");
      const appPort = await freePort();
      await using _app = appOn(appPort);
      await previewsChanged(
        cwd,
        [preview(7, appPort, "http://pr-7.preview.example.test"), preview(8, 1, "http://pr-8.preview.example.test")],
        [settings()],
      );
      const { caddy } = files(cwd);
      expect(existsSync(caddy)).toBe(true);
      const httpPort = await freePort();
      const config = join(home, "Caddyfile");
      writeFileSync(config, `{\n\tadmin off\n\thttp_port ${httpPort}\n\tdefault_bind 127.0.0.1\n}\nimport ${caddy}\n`);
      await using proxy = startCaddy(config, home);
      await proxy.ready();
      const ask = (host: string) =>
        fetch(`http://127.0.0.1:${httpPort}/hello`, { headers: { host }, signal: AbortSignal.timeout(10_000) });
      const answer = await waitFor(async () => {
        const res = await ask("pr-7.preview.example.test").catch(() => undefined);
        return res?.status === 200 ? res.text() : undefined;
      }, "the preview's answer through Caddy");
      expect(answer).toBe("preview 7: pr-7.preview.example.test /hello");
      // Another host is not the preview's.
      const other = await ask("pr-9.preview.example.test");
      expect(await other.text()).not.toContain("preview 7");
    },
    60_000,
  );
});

/** The preview's app: answers with the host and path it was asked for. */
function appOn(port: number) {
  const server = Bun.serve({
    port,
    hostname: "127.0.0.1",
    fetch: (request) => {
      const url = new URL(request.url);
      return new Response(`preview 7: ${request.headers.get("host")} ${url.pathname}`);
    },
  });
  return { [Symbol.asyncDispose]: async () => server.stop(true) };
}
