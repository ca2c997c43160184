import { spawnSync } from "node:child_process";
import { accessSync, constants, copyFileSync, existsSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { consola } from "consola";
import { ensurePrivateDir } from "./deploy/files.ts";

/**
 * SPEC item 8: on Linux, an interactive start asks about HTTPS unless SERVICE_SKIP_HTTPS_PROMPT=1. Interactive
 * means a terminal on both sides: with stdout sent to a file (`service > service.log` typed at a terminal) the
 * question would land in the file and the server would wait for an answer nobody can see.
 */
export function shouldAskAboutHttps(env: NodeJS.ProcessEnv = process.env): boolean {
  return (
    process.platform === "linux" && process.stdin.isTTY === true && process.stdout.isTTY === true && env.SERVICE_SKIP_HTTPS_PROMPT !== "1"
  );
}

export interface ProxySetup {
  /** The public domain the Git host will call. */
  domain: string;
  /** The port the service listens on (locally). */
  port: number;
  runTimeoutMs: number;
  maxBodyBytes: number;
}

/** Where the generated proxy configs are written, under the working directory. */
export const PROXY_DIR = ".service";

/** A domain name as a certificate needs it: labels of letters, digits and hyphens. */
export function validDomain(domain: string): boolean {
  return /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(domain);
}

/**
 * A Caddyfile: automatic HTTPS for the domain, output flushed at once (`flush_interval -1`) so deploys stream
 * live. `tls internal` and extra global options are for local tests (a self-signed CA, no public certificate).
 */
export function caddyfile(setup: ProxySetup, test: { address?: string; globalOptions?: string[]; tlsInternal?: boolean } = {}): string {
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

/** An nginx server block: TLS (certbot's paths), buffering off, a read timeout above runTimeoutMs, Host forwarded. */
export function nginxConf(setup: ProxySetup): string {
  const timeout = Math.ceil(setup.runTimeoutMs / 1000) + 120;
  return `# nginx in front of the deploy webhook. Get a certificate with: certbot certonly --nginx -d ${setup.domain}
server {
    listen 443 ssl;
    listen [::]:443 ssl;
    server_name ${setup.domain};

    ssl_certificate     /etc/letsencrypt/live/${setup.domain}/fullchain.pem;
    ssl_certificate_key /etc/letsencrypt/live/${setup.domain}/privkey.pem;

    client_max_body_size ${Math.ceil(setup.maxBodyBytes / 1048576)}m;

    location / {
        proxy_pass http://127.0.0.1:${setup.port};
        proxy_http_version 1.1;
        proxy_set_header Host $host;
        proxy_set_header X-Forwarded-Host $host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        # Deploy output streams live: no buffering, and no cut while a deploy is silent.
        proxy_buffering off;
        proxy_request_buffering off;
        proxy_read_timeout ${timeout}s;
        proxy_send_timeout ${timeout}s;
    }
}

server {
    listen 80;
    listen [::]:80;
    server_name ${setup.domain};
    return 301 https://$host$request_uri;
}
`;
}

/** Writes `.service/Caddyfile` and `.service/nginx.conf`; returns their paths. */
export function writeProxyConfigs(cwd: string, setup: ProxySetup): { caddy: string; nginx: string } {
  const dir = resolve(cwd, PROXY_DIR);
  ensurePrivateDir(dir);
  const caddy = join(dir, "Caddyfile");
  const nginx = join(dir, "nginx.conf");
  writeFileSync(caddy, caddyfile(setup));
  writeFileSync(nginx, nginxConf(setup));
  return { caddy, nginx };
}

function enableCommands(setup: ProxySetup, files: { caddy: string; nginx: string }): string {
  return [
    `Wrote ${files.caddy} and ${files.nginx} for https://${setup.domain}/ (the proxy forwards to 127.0.0.1:${setup.port}).`,
    "",
    "With Caddy (certificates automatic; ports 80 and 443 open, DNS of the domain pointing here):",
    `  sudo cp ${files.caddy} /etc/caddy/Caddyfile && sudo systemctl reload caddy`,
    "",
    "Or with nginx:",
    `  sudo cp ${files.nginx} /etc/nginx/sites-available/service && sudo ln -sf /etc/nginx/sites-available/service /etc/nginx/sites-enabled/service`,
    `  sudo certbot certonly --nginx -d ${setup.domain} && sudo nginx -t && sudo systemctl reload nginx`,
    "",
    `Then set hostname: 127.0.0.1 in service.yaml so only the proxy reaches the service, and give your Git host https://${setup.domain}/ as the webhook URL.`,
    "",
  ].join("\n");
}

const CADDY_CONFIG = "/etc/caddy/Caddyfile";

/** Caddy is installed and its config may be written by this process. */
function caddyInstallable(): boolean {
  if (spawnSync("caddy", ["version"], { stdio: "ignore" }).status !== 0) return false;
  try {
    accessSync(existsSync(CADDY_CONFIG) ? CADDY_CONFIG : dirname(CADDY_CONFIG), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Puts the Caddyfile in place (the old one kept as a backup) and asks the running Caddy to reload it. */
function installCaddy(file: string): string {
  const backup = `${CADDY_CONFIG}.before-service-${Date.now()}`;
  if (existsSync(CADDY_CONFIG)) copyFileSync(CADDY_CONFIG, backup);
  copyFileSync(file, CADDY_CONFIG);
  const reload = spawnSync("caddy", ["reload", "--config", CADDY_CONFIG, "--adapter", "caddyfile"], { encoding: "utf8" });
  const kept = existsSync(backup) ? ` (the previous one is in ${backup})` : "";
  return reload.status === 0
    ? `Installed ${CADDY_CONFIG}${kept} and reloaded Caddy.`
    : `Installed ${CADDY_CONFIG}${kept}; reloading Caddy failed (${(reload.stderr || reload.error?.message || "").trim()}): start it with sudo systemctl restart caddy.`;
}

/**
 * The HTTPS question. "Yes" asks for the public domain, writes a Caddyfile and an nginx server block under
 * `.service/`, prints how to enable them, and offers to install the Caddyfile when Caddy is here and its
 * config may be written.
 */
export async function askAboutHttps(setup: Omit<ProxySetup, "domain">, cwd = process.cwd()): Promise<void> {
  const answer = await consola.prompt("Set up HTTPS (a TLS reverse proxy in front of this service)?", { type: "confirm", initial: false, cancel: "default" });
  if (answer !== true) return;
  // A plain readline question: consola's text prompt loses what is typed under Bun.
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  let domain = "";
  try {
    for (let tries = 0; tries < 3 && !validDomain(domain); tries++) {
      if (tries > 0) consola.warn(`"${domain}" is not a domain name (like deploy.example.com)`);
      domain = (await rl.question("Public domain name of this server, e.g. deploy.example.com (the Git host will call https://<domain>/): ")).trim().toLowerCase();
    }
  } finally {
    rl.close();
  }
  if (!validDomain(domain)) {
    process.stdout.write("No domain given: skipping the HTTPS setup. Skip this question with SERVICE_SKIP_HTTPS_PROMPT=1.\n");
    return;
  }
  const full = { ...setup, domain };
  const files = writeProxyConfigs(cwd, full);
  process.stdout.write(`${enableCommands(full, files)}\n`);
  if (!caddyInstallable()) return;
  const install = await consola.prompt(`Caddy is installed here: put this Caddyfile in ${CADDY_CONFIG} and reload Caddy now?`, {
    type: "confirm",
    initial: false,
    cancel: "default",
  });
  if (install === true) process.stdout.write(`${installCaddy(files.caddy)}\n`);
}
