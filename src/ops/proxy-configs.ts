/**
 * The reverse proxy's configs the HTTPS setup writes (docs/production.md "Running it for real: server, HTTPS,
 * systemd"): a Caddy site and an nginx server for the domain, streaming deploys live, and the steps that put them
 * in place. Asking about it and installing Caddy's site is ops/https.ts.
 */
import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { isLoopback } from "../system/address.ts";
import { ensurePrivateDir } from "../system/files.ts";

export interface ProxySetup {
  /** The public domain the Git host will call. */
  domain: string;
  /** The port the service listens on (locally). */
  port: number;
  maxBodyBytes: number;
  /** How long the proxy waits on a deploy stream: the longest deploy (deployLimitSeconds). */
  timeoutSeconds: number;
}

/** Where the generated proxy configs are written, under the working directory. */
export const PROXY_DIR = ".service";

/** A domain name as a certificate needs it: labels of letters, digits and hyphens. */
export function validDomain(domain: string): boolean {
  return /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(domain);
}

/**
 * A Caddyfile site: automatic HTTPS for the domain, output flushed at once (`flush_interval -1`) so deploys stream
 * live. It holds the site only (no global options), so it can be imported into a Caddyfile that serves other
 * sites. `tls internal` and global options are for local tests (a self-signed CA, no public certificate).
 */
export function caddyfile(
  setup: ProxySetup,
  test: { address?: string; globalOptions?: string[]; tlsInternal?: boolean } = {},
): string {
  const globals = test.globalOptions?.length ? `{\n${test.globalOptions.map((o) => `\t${o}`).join("\n")}\n}\n\n` : "";
  return `${globals}# Caddy in front of the deploy webhook: HTTPS for ${setup.domain}, certificates handled by Caddy.
${test.address ?? setup.domain} {
${test.tlsInternal ? "\ttls internal\n" : ""}\trequest_body {
\t\tmax_size ${setup.maxBodyBytes}
\t}
\treverse_proxy 127.0.0.1:${setup.port} {
\t\t# Stream deploy output to the client as it is written.
\t\tflush_interval -1
\t}
}
`;
}

/**
 * An nginx server block: TLS with certbot's certificate paths, buffering off, read and send timeouts of the
 * longest deploy, Host forwarded, and port 80 redirected. The test options put it on loopback ports with a
 * self-signed certificate.
 */
export function nginxConf(
  setup: ProxySetup,
  test: { https?: string; http?: string; certificate?: string; certificateKey?: string } = {},
): string {
  const https = test.https ? [`${test.https} ssl`] : ["443 ssl", "[::]:443 ssl"];
  const http = test.http ? [test.http] : ["80", "[::]:80"];
  const listen = (addresses: string[]) => addresses.map((address) => `    listen ${address};`).join("\n");
  return `# nginx in front of the deploy webhook: HTTPS for ${setup.domain}. The certificate must exist before this
# site is enabled (nginx -t fails without it): sudo certbot certonly --nginx -d ${setup.domain}
server {
${listen(https)}
    server_name ${setup.domain};

    ssl_certificate     ${test.certificate ?? `/etc/letsencrypt/live/${setup.domain}/fullchain.pem`};
    ssl_certificate_key ${test.certificateKey ?? `/etc/letsencrypt/live/${setup.domain}/privkey.pem`};

    client_max_body_size ${Math.ceil(setup.maxBodyBytes / 1048576)}m;

    location / {
        proxy_pass http://127.0.0.1:${setup.port};
        proxy_http_version 1.1;
        proxy_set_header Host $host;
        proxy_set_header X-Forwarded-Host $host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        # Deploy output streams live: no buffering, and no cut while a deploy runs (the longest deploy).
        proxy_buffering off;
        proxy_request_buffering off;
        proxy_read_timeout ${setup.timeoutSeconds}s;
        proxy_send_timeout ${setup.timeoutSeconds}s;
    }
}

server {
${listen(http)}
    server_name ${setup.domain};
    # In a location, not the server: certbot's renewals add an exact-match challenge location that wins over it.
    location / {
        return 301 https://$host$request_uri;
    }
}
`;
}

/** Where the HTTPS setup writes its proxy configs: `.service/Caddyfile` and `.service/nginx.conf`. */
export function proxyFiles(cwd: string): { caddy: string; nginx: string } {
  const dir = resolve(cwd, PROXY_DIR);
  return { caddy: join(dir, "Caddyfile"), nginx: join(dir, "nginx.conf") };
}

/** Writes `.service/Caddyfile` and `.service/nginx.conf`; returns their paths. */
export function writeProxyConfigs(cwd: string, setup: ProxySetup): { caddy: string; nginx: string } {
  ensurePrivateDir(resolve(cwd, PROXY_DIR));
  const { caddy, nginx } = proxyFiles(cwd);
  writeFileSync(caddy, caddyfile(setup));
  writeFileSync(nginx, nginxConf(setup));
  return { caddy, nginx };
}

/**
 * The steps to enable the proxy, in an order that works on a fresh server: for nginx the certificate comes first
 * (certbot's nginx plugin needs a config that passes `nginx -t`, and the site does not until its certificate
 * exists). The hostname step only when the service still listens beyond loopback.
 */
export function setupSteps(setup: ProxySetup, files: { caddy: string; nginx: string }, hostname: string): string {
  const caddySite = caddySiteFile(CADDY_CONFIG, setup.domain);
  const lines = [
    `Wrote ${files.caddy} and ${files.nginx} for https://${setup.domain}/ (the proxy forwards to 127.0.0.1:${setup.port}).`,
    "",
    "With Caddy (certificates automatic; ports 80 and 443 open, DNS of the domain pointing here), next to its other sites:",
    `  sudo cp ${files.caddy} ${caddySite}`,
    `  grep -qxF 'import ${caddySite}' ${CADDY_CONFIG} || echo 'import ${caddySite}' | sudo tee -a ${CADDY_CONFIG} > /dev/null`,
    "  sudo systemctl reload caddy",
    "",
    "Or with nginx (apt install nginx python3-certbot-nginx; ports 80 and 443 open, DNS pointing here), in this order:",
    `  sudo certbot certonly --nginx -d ${setup.domain}`,
    `  sudo cp ${files.nginx} /etc/nginx/sites-available/service-${setup.domain}`,
    `  sudo ln -sf /etc/nginx/sites-available/service-${setup.domain} /etc/nginx/sites-enabled/`,
    "  sudo nginx -t && sudo systemctl reload nginx",
    "",
  ];
  if (!isLoopback(hostname))
    lines.push("Then set hostname: 127.0.0.1 in service.yaml so only the proxy reaches the service.");
  lines.push(`Give your Git host https://${setup.domain}/ as the webhook URL.`, "");
  return lines.join("\n");
}

/** Caddy's own config, which imports the site file. */
export const CADDY_CONFIG = "/etc/caddy/Caddyfile";

/** The service's site file for a domain, next to the Caddyfile that imports it. */
export function caddySiteFile(config: string, domain: string): string {
  return join(dirname(config), `service-${domain}.caddy`);
}
