import { spawnSync } from "node:child_process";
import { accessSync, constants, copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { consola as prompts } from "consola";
import type { ResolvedApp } from "../config/apps.ts";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import { deployLimitSeconds } from "./deploy-limit.ts";
import { isLoopback } from "../system/address.ts";
import { ensurePrivateDir } from "../system/files.ts";
import { consola } from "../system/logger.ts";

/**
 * docs/production.md "Running it for real: server, HTTPS, systemd": on Linux, an interactive start asks about HTTPS unless
 * SERVICE_SKIP_HTTPS_PROMPT=1 or `httpsPrompt: false`. Interactive means a terminal on both sides: with stdout sent
 * to a file (`service > service.log` typed at a terminal) the question would land in the file and the server would
 * wait for an answer nobody can see.
 */
export function shouldAskAboutHttps(
  config: Pick<ResolvedConfig, "httpsPrompt">,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  return (
    process.platform === "linux" &&
    process.stdin.isTTY === true &&
    process.stdout.isTTY === true &&
    env.SERVICE_SKIP_HTTPS_PROMPT !== "1" &&
    config.httpsPrompt !== false
  );
}

/** How never to be asked, said with the question and when it is skipped. */
const NEVER_ASK = "httpsPrompt: false in service.yaml, or SERVICE_SKIP_HTTPS_PROMPT=1";

/**
 * The HTTPS question of an interactive start, unless an earlier "yes" wrote the proxy files: HTTPS is set up
 * then, and asking at every start would hold the port closed for a question already answered. One line says
 * where the files are instead.
 */
export async function httpsAtStart(
  config: Pick<ResolvedConfig, "port" | "hostname" | "maxBodyBytes">,
  apps: Pick<ResolvedApp, "runTimeoutMs" | "rollbackOnFailure">[],
  cwd = process.cwd(),
): Promise<void> {
  const written = Object.values(proxyFiles(cwd)).filter((file) => existsSync(file));
  if (written.length === 0) return askAboutHttps(config, apps, cwd);
  const files = written.length > 1 ? `files are ${written.join(" and ")}` : `file is ${written[0]}`;
  process.stdout.write(
    `HTTPS is set up: the proxy ${files} (remove ${written.length > 1 ? "them" : "it"} to be asked again).\n`,
  );
}

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

const CADDY_CONFIG = "/etc/caddy/Caddyfile";

/** The service's site file for a domain, next to the Caddyfile that imports it. */
export function caddySiteFile(config: string, domain: string): string {
  return join(dirname(config), `service-${domain}.caddy`);
}

/** Caddy is installed and its config (and the directory of the site file) may be written by this process. */
function caddyInstallable(config = CADDY_CONFIG): boolean {
  if (spawnSync("caddy", ["version"], { stdio: "ignore" }).status !== 0) return false;
  try {
    accessSync(dirname(config), constants.W_OK);
    if (existsSync(config)) accessSync(config, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

const caddy = (...args: string[]) => spawnSync("caddy", args, { encoding: "utf8" });
const caddyError = (result: ReturnType<typeof caddy>) =>
  (result.stderr || result.error?.message || "").trim().split("\n").slice(-3).join(" ");

/**
 * Adds the service's site to a running Caddy without touching its other sites: the site goes to its own file,
 * which the Caddyfile imports (one line appended, the old Caddyfile kept as a backup). A config Caddy refuses
 * (say, another site block for the same domain) is put back as it was.
 */
export function installCaddySite(file: string, domain: string, config = CADDY_CONFIG): string {
  const site = caddySiteFile(config, domain);
  const importLine = `import ${site}`;
  const before = existsSync(config) ? readFileSync(config, "utf8") : undefined;
  const siteBefore = existsSync(site) ? readFileSync(site, "utf8") : undefined;
  const imported = before?.split("\n").some((line) => line.trim() === importLine) ?? false;
  const backup = `${config}.before-service-${Date.now()}`;
  if (before !== undefined && !imported) copyFileSync(config, backup);
  copyFileSync(file, site);
  if (!imported)
    writeFileSync(
      config,
      `${before ?? ""}${before && !before.endsWith("\n") ? "\n" : ""}\n# The deploy webhook for ${domain}\n${importLine}\n`,
    );
  const kept = existsSync(backup) ? ` (the previous one is in ${backup})` : "";

  const valid = caddy("validate", "--config", config, "--adapter", "caddyfile");
  if (valid.status !== 0) {
    if (before === undefined) rmSync(config, { force: true });
    else writeFileSync(config, before);
    if (siteBefore === undefined) rmSync(site, { force: true });
    else writeFileSync(site, siteBefore);
    rmSync(backup, { force: true });
    return `Caddy refused ${config} with the site for ${domain} (${caddyError(valid)}); left it as it was. Add ${file} to it by hand.`;
  }
  const reload = caddy("reload", "--config", config, "--adapter", "caddyfile");
  const added = `Added ${site} to ${config} (\`${importLine}\`)${kept}`;
  return reload.status === 0
    ? `${added} and reloaded Caddy; its other sites are unchanged.`
    : `${added}; reloading Caddy failed (${caddyError(reload)}): start it with sudo systemctl restart caddy.`;
}

/**
 * The HTTPS question. "Yes" asks for the public domain, writes a Caddyfile site and an nginx server block under
 * `.service/`, prints how to enable them, and offers to add the site to Caddy when Caddy is here and its config
 * may be written.
 */
export async function askAboutHttps(
  config: Pick<ResolvedConfig, "port" | "hostname" | "maxBodyBytes">,
  apps: Pick<ResolvedApp, "runTimeoutMs" | "rollbackOnFailure">[],
  cwd = process.cwd(),
): Promise<void> {
  // consola wraps the question to the terminal's width; a pseudo-terminal with no size reports 0 columns, which
  // would put one character on each line.
  if (!(process.stdout.columns > 0)) process.stdout.columns = 80;
  process.stdout.write(`Asked at each interactive start until it is set up; never asked with ${NEVER_ASK}.\n`);
  const answer = await prompts.prompt("Set up HTTPS (a TLS reverse proxy in front of this service)?", {
    type: "confirm",
    initial: false,
    cancel: "default",
  });
  if (answer !== true) return;
  // A plain readline question: consola's text prompt loses what is typed under Bun.
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  let domain = "";
  try {
    for (let tries = 0; tries < 3 && !validDomain(domain); tries++) {
      if (tries > 0) consola.warn(`"${domain}" is not a domain name (like deploy.example.com)`);
      domain = (
        await rl.question(
          "Public domain name of this server, e.g. deploy.example.com (the Git host will call https://<domain>/): ",
        )
      )
        .trim()
        .toLowerCase();
    }
  } finally {
    rl.close();
  }
  if (!validDomain(domain)) {
    process.stdout.write(`No domain given: skipping the HTTPS setup. Skip this question with ${NEVER_ASK}.\n`);
    return;
  }
  const setup: ProxySetup = {
    domain,
    port: config.port,
    maxBodyBytes: config.maxBodyBytes,
    timeoutSeconds: deployLimitSeconds(apps),
  };
  const files = writeProxyConfigs(cwd, setup);
  process.stdout.write(`${setupSteps(setup, files, config.hostname)}\n`);
  if (!caddyInstallable()) return;
  const install = await prompts.prompt(
    `Caddy is installed here: add this site to ${CADDY_CONFIG} (its other sites stay) and reload Caddy now?`,
    {
      type: "confirm",
      initial: false,
      cancel: "default",
    },
  );
  if (install === true) process.stdout.write(`${installCaddySite(files.caddy, domain)}\n`);
}
