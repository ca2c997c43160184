/**
 * docs/production.md "Running it for real: server, HTTPS, systemd", for real: the proxies the HTTPS setup configures, from
 * Debian's packages, in front of the service on loopback. Caddy with `tls internal`, nginx with a self-signed
 * certificate: an HTTPS POST through each streams live and ends with `[done] ok=true`. Adding the site to a Caddy
 * that serves other sites keeps them. Skipped where Caddy or nginx is not installed; `.ci/run` installs both.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { installCaddySite } from "../../src/ops/https.ts";
import { caddyfile, caddySiteFile, nginxConf, setupSteps, type ProxySetup } from "../../src/ops/proxy-configs.ts";
import { type Gate, StreamReader, startGated } from "../_support/gate.ts";
import { lastLine, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import {
  freePort,
  nginx,
  nginxMain,
  noCaddy,
  openssl,
  selfSigned,
  startCaddy,
  startNginx,
  tls,
  waitForProxy,
  withCaddyHome,
} from "../_support/proxy-helpers.ts";

if (noCaddy) console.warn("caddy is not installed: the Caddy tests are skipped (apt-get install caddy)");
if (!nginx || !openssl)
  console.warn("nginx or openssl is not installed: the nginx tests are skipped (apt-get install nginx openssl)");

function setupFor(port: number, domain = "localhost"): ProxySetup {
  return { domain, port, maxBodyBytes: 1_000_000, timeoutSeconds: 3660 };
}

/** A deploy POSTed to `url` streams through the proxy while its script waits at a gate, then ends ok; a wrong secret is 401. */
async function expectLiveDeploy(url: string, gate: Gate): Promise<void> {
  const res = await fetch(url, { method: "POST", headers: { "x-service-secret": SECRET }, tls } as RequestInit);
  expect(res.status).toBe(200);
  const reader = new StreamReader(res);
  await waitFor(() => reader.text.includes("[run] $"), "the run line through the proxy");
  expect(gate.lines()).toHaveLength(1);
  expect(reader.text).not.toContain("[done]");
  gate.open();
  expect(lastLine(await reader.done)).toBe("[done] ok=true exitCode=0");
  const wrong = await fetch(url, { method: "POST", headers: { "x-service-secret": "wrong" }, tls } as RequestInit);
  expect(wrong.status).toBe(401);
  await wrong.text();
}

describe("HTTPS through the generated Caddy config", () => {
  test.skipIf(noCaddy)(
    "an HTTPS POST through Caddy streams the deploy live and ends with [done] ok=true",
    async () => {
      await using gated = await startGated();
      const { gate, server: service } = gated;
      const home = tempDir("service-caddy-");
      const [httpsPort, httpPort] = [await freePort(), await freePort()];
      const config = join(home, "Caddyfile");
      writeFileSync(
        config,
        caddyfile(setupFor(service.port), {
          address: `https://localhost:${httpsPort}`,
          tlsInternal: true,
          globalOptions: [
            "admin off",
            "skip_install_trust",
            `http_port ${httpPort}`,
            `https_port ${httpsPort}`,
            "auto_https disable_redirects",
          ],
        }),
      );
      await using caddy = startCaddy(config, home);
      // A GET is a 404 from the service behind it.
      await caddy.certificate("localhost");
      await waitForProxy(caddy, `https://localhost:${httpsPort}/`, 404, "Caddy");
      await expectLiveDeploy(`https://localhost:${httpsPort}/`, gate);
    },
    60_000,
  );

  test.skipIf(noCaddy)(
    "adding the site to a running Caddy keeps its other sites, imports the site once, and deploys through it",
    async () => {
      await using gated = await startGated();
      const { gate, server: service } = gated;
      const home = tempDir("service-caddy-");
      const [adminPort, httpsPort, httpPort, otherPort] = [
        await freePort(),
        await freePort(),
        await freePort(),
        await freePort(),
      ];
      const config = join(home, "Caddyfile");
      const original = [
        "{",
        `\tadmin 127.0.0.1:${adminPort}`,
        "\tskip_install_trust",
        "\tlocal_certs",
        `\thttp_port ${httpPort}`,
        `\thttps_port ${httpsPort}`,
        "\tauto_https disable_redirects",
        "}",
        "",
        `http://127.0.0.1:${otherPort} {`,
        '\trespond "the other site"',
        "}",
        "",
      ].join("\n");
      writeFileSync(config, original);
      await using caddy = startCaddy(config, home);
      const other = `http://127.0.0.1:${otherPort}/`;
      // Waited for on Caddy's own log lines, not for a while: a loaded machine only makes it slower.
      await caddy.ready();
      expect(await (await fetch(other)).text()).toBe("the other site");

      // The site as the HTTPS setup writes it (for the domain "localhost", which Caddy certifies itself here).
      const site = join(tempDir(), "Caddyfile");
      writeFileSync(site, caddyfile(setupFor(service.port)));
      const message = withCaddyHome(home, () => installCaddySite(site, "localhost", config));
      expect(message).toContain("reloaded Caddy");
      const after = readFileSync(config, "utf8");
      expect(after.startsWith(original)).toBe(true);
      expect(after).toContain(`import ${caddySiteFile(config, "localhost")}\n`);
      expect(readdirSync(home).filter((name) => name.startsWith("Caddyfile.before-service-"))).toHaveLength(1);

      await caddy.certificate("localhost");
      await waitForProxy(caddy, `https://localhost:${httpsPort}/`, 404, "Caddy");
      expect(await (await fetch(other)).text()).toBe("the other site");
      await expectLiveDeploy(`https://localhost:${httpsPort}/`, gate);

      // Again (say, a new port): the site file is replaced, the import stays one line.
      expect(withCaddyHome(home, () => installCaddySite(site, "localhost", config))).toContain("reloaded Caddy");
      expect(readFileSync(config, "utf8").split(`import ${caddySiteFile(config, "localhost")}`)).toHaveLength(2);
    },
    60_000,
  );

  test.skipIf(noCaddy)(
    "a Caddyfile that already serves the domain is left as it was, and the message says so",
    () => {
      const home = tempDir("service-caddy-");
      const config = join(home, "Caddyfile");
      const original = '{\n\tadmin off\n}\n\nlocalhost {\n\trespond "mine"\n}\n';
      writeFileSync(config, original);
      const site = join(tempDir(), "Caddyfile");
      writeFileSync(site, caddyfile(setupFor(3141)));
      const message = withCaddyHome(home, () => installCaddySite(site, "localhost", config));
      expect(message).toContain("left it as it was");
      expect(readFileSync(config, "utf8")).toBe(original);
      expect(readdirSync(home)).toEqual(["Caddyfile"]);
    },
    30_000,
  );
});

describe("HTTPS through the generated nginx config", () => {
  test("the printed nginx steps get the certificate before enabling the site and running nginx -t", () => {
    const steps = setupSteps(
      setupFor(3141, "deploy.example.com"),
      { caddy: "/srv/app/.service/Caddyfile", nginx: "/srv/app/.service/nginx.conf" },
      "0.0.0.0",
    );
    const certbot = steps.indexOf("sudo certbot certonly --nginx -d deploy.example.com");
    const enable = steps.indexOf(
      "sudo ln -sf /etc/nginx/sites-available/service-deploy.example.com /etc/nginx/sites-enabled/",
    );
    const check = steps.indexOf("sudo nginx -t && sudo systemctl reload nginx");
    expect(certbot).toBeGreaterThan(-1);
    expect(enable).toBeGreaterThan(certbot);
    expect(check).toBeGreaterThan(enable);
  });

  test.skipIf(!nginx || !openssl)(
    "nginx -t fails on the site before its certificate exists (why certbot comes first) and passes after",
    () => {
      const prefix = tempDir("service-nginx-");
      const site = join(prefix, "site.conf");
      const main = join(prefix, "nginx.conf");
      writeFileSync(main, nginxMain(prefix, site));
      const [https, http] = ["127.0.0.1:1", "127.0.0.1:2"];
      writeFileSync(
        site,
        nginxConf(setupFor(3141), {
          https,
          http,
          certificate: join(prefix, "missing", "fullchain.pem"),
          certificateKey: join(prefix, "missing", "privkey.pem"),
        }),
      );
      const before = Bun.spawnSync([nginx!, "-t", "-p", prefix, "-c", main], { stdout: "pipe", stderr: "pipe" });
      expect(before.exitCode).not.toBe(0);
      expect(before.stderr.toString()).toContain("fullchain.pem");
      writeFileSync(site, nginxConf(setupFor(3141), { https, http, ...selfSigned(prefix) }));
      const after = Bun.spawnSync([nginx!, "-t", "-p", prefix, "-c", main], { stdout: "pipe", stderr: "pipe" });
      expect(after.stderr.toString()).toContain("test is successful");
      expect(after.exitCode).toBe(0);
    },
  );

  test.skipIf(!nginx || !openssl)(
    "an HTTPS POST through nginx streams the deploy live and ends with [done] ok=true",
    async () => {
      await using gated = await startGated();
      const { gate, server: service } = gated;
      const prefix = tempDir("service-nginx-");
      const [httpsPort, httpPort] = [await freePort(), await freePort()];
      const site = join(prefix, "site.conf");
      const main = join(prefix, "nginx.conf");
      writeFileSync(
        site,
        nginxConf(setupFor(service.port), {
          https: `127.0.0.1:${httpsPort}`,
          http: `127.0.0.1:${httpPort}`,
          ...selfSigned(prefix),
        }),
      );
      writeFileSync(main, nginxMain(prefix, site));
      await using proc = startNginx(prefix, main);
      await waitForProxy(proc, `https://localhost:${httpsPort}/`, 404, "nginx");
      // Plain HTTP is sent to HTTPS.
      const redirect = await fetch(`http://localhost:${httpPort}/hook`, { redirect: "manual" });
      expect(redirect.status).toBe(301);
      expect(redirect.headers.get("location")).toBe("https://localhost/hook");
      await expectLiveDeploy(`https://localhost:${httpsPort}/`, gate);
    },
    60_000,
  );
});
