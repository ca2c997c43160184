/**
 * The proxy snippets of the docs, run as the docs give them (read from the fenced blocks of the page, so docs and
 * tests cannot drift): the admin listener behind Caddy and behind nginx on a sub-path, with a real browser logging
 * in to the dashboard through each; and the files the HTTPS setup writes, the same as docs/production.md shows
 * (test/ops/https-proxy.test.ts runs them for real).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import { deployLimitSeconds } from "../../src/ops/deploy-limit.ts";
import { caddyfile, nginxConf } from "../../src/ops/proxy-configs.ts";
import { makeRepo, tempDir } from "../_support/helpers.ts";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { confirmWith, hasBrowser, launchBrowser } from "../_support/browser.ts";
import { docBlock } from "../_support/doc-snippets.ts";
import {
  freePort,
  nginx,
  nginxMain,
  noCaddy,
  openssl,
  selfSigned,
  startCaddy,
  startNginx,
  waitForProxy,
} from "../_support/proxy-helpers.ts";

const browser = hasBrowser("the dashboard behind a proxy");
const ADMIN_PAGE = "docs/admin.md";
const REACHING_IT = "Reaching it";

/** The docs' snippet with the admin port the docs use (9090) replaced by the test's. */
function adminSnippet(lang: "caddy" | "nginx", adminPort: number): string {
  const snippet = docBlock(ADMIN_PAGE, lang, REACHING_IT);
  expect(snippet).toContain("127.0.0.1:9090");
  return snippet.replaceAll("127.0.0.1:9090", `127.0.0.1:${adminPort}`);
}

/** The admin listener (behind a proxy: `trustProxy`), with its port. */
async function adminBehindProxy() {
  const repo = makeRepo();
  const { server, admin } = await startAdmin(repo.clone, {
    SERVICE_RUN_SCRIPT: "echo ran",
    SERVICE_TRUST_PROXY: "true",
  });
  return { server, port: Number(new URL(admin).port) };
}

/** Logs in to the dashboard at `url` (the proxy's sub-path) in Chromium, and pauses and resumes the app from it. */
async function loginThrough(url: string): Promise<void> {
  await using context = await launchBrowser({ acceptTls: true });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(20_000);
  await page.goto(url);
  await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
  const [login] = await Promise.all([
    page.waitForResponse((response) => response.url() === `${url}login`),
    page.getByRole("button", { name: "Log in" }).click(),
  ]);
  // Not 403 "cross-site request": the proxy passes the Host the browser sent, which its Origin names.
  expect({ status: login.status(), body: login.status() === 303 ? "" : await login.text() }).toEqual({
    status: 303,
    body: "",
  });
  const card = page.getByRole("region", { name: "default" });
  await card.getByText("idle").waitFor();
  expect(page.url()).toBe(url);
  // The session cookie is Secure: the proxy said the request came over HTTPS.
  expect((await context.cookies()).map((cookie) => cookie.secure)).toEqual([true]);
  // An action (a POST with the session cookie) passes the cross-site check too.
  await card.getByLabel("Reason to pause default").fill("through the proxy");
  await card.getByRole("button", { name: "Pause" }).click();
  await card.getByText("paused: through the proxy").waitFor();
  await confirmWith(page, card.getByRole("button", { name: "Resume" }));
  await card.getByText("idle").waitFor();
}

describe(`the admin listener behind a proxy, with the snippets of (${ADMIN_PAGE} "${REACHING_IT}")`, () => {
  test.skipIf(!browser || !nginx || !openssl)(
    "the dashboard login through nginx with the docs' snippet succeeds",
    async () => {
      await using service = await adminBehindProxy().then(({ server, port }) => Object.assign(server, { port }));
      const prefix = tempDir("service-nginx-");
      const httpsPort = await freePort();
      const { certificate, certificateKey } = selfSigned(prefix);
      const site = join(prefix, "site.conf");
      const main = join(prefix, "nginx.conf");
      writeFileSync(
        site,
        [
          "server {",
          `    listen 127.0.0.1:${httpsPort} ssl;`,
          "    server_name localhost;",
          `    ssl_certificate ${certificate};`,
          `    ssl_certificate_key ${certificateKey};`,
          adminSnippet("nginx", service.port),
          "}",
          "",
        ].join("\n"),
      );
      writeFileSync(main, nginxMain(prefix, site));
      await using proxy = startNginx(prefix, main);
      const url = `https://localhost:${httpsPort}/admin/`;
      await waitForProxy(proxy, url, 401, "nginx");
      await loginThrough(url);
    },
    60_000,
  );

  test.skipIf(!browser || noCaddy)(
    "the dashboard login through Caddy with the docs' snippet succeeds",
    async () => {
      await using service = await adminBehindProxy().then(({ server, port }) => Object.assign(server, { port }));
      const home = tempDir("service-caddy-");
      const [httpsPort, httpPort] = [await freePort(), await freePort()];
      const config = join(home, "Caddyfile");
      writeFileSync(
        config,
        [
          "{",
          "\tadmin off",
          "\tskip_install_trust",
          `\thttp_port ${httpPort}`,
          `\thttps_port ${httpsPort}`,
          "\tauto_https disable_redirects",
          "}",
          "",
          `https://localhost:${httpsPort} {`,
          "\ttls internal",
          adminSnippet("caddy", service.port),
          "}",
          "",
        ].join("\n"),
      );
      await using proxy = startCaddy(config, home);
      await proxy.certificate("localhost");
      const url = `https://localhost:${httpsPort}/admin/`;
      await waitForProxy(proxy, url, 401, "Caddy");
      await loginThrough(url);
    },
    60_000,
  );
});

describe('the files the HTTPS setup writes are the ones the docs show (docs/production.md "HTTPS")', () => {
  test("for deploy.example.com with the defaults, .service/Caddyfile and .service/nginx.conf read as the docs' blocks", () => {
    const defaults = defaultConfig("/srv/app");
    const setup = {
      domain: "deploy.example.com",
      port: defaults.port,
      maxBodyBytes: defaults.maxBodyBytes,
      timeoutSeconds: deployLimitSeconds([defaults]),
    };
    expect(caddyfile(setup)).toBe(docBlock("docs/production.md", "caddy", "HTTPS"));
    expect(nginxConf(setup)).toBe(docBlock("docs/production.md", "nginx", "HTTPS"));
  });
});
