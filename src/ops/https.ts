import { spawnSync } from "node:child_process";
import { accessSync, constants, copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { createInterface } from "node:readline/promises";
import { consola as prompts } from "consola";
import type { ResolvedApp } from "../config/apps.ts";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import { deployLimitSeconds } from "./deploy-limit.ts";
import {
  CADDY_CONFIG,
  caddySiteFile,
  type ProxySetup,
  proxyFiles,
  setupSteps,
  validDomain,
  writeProxyConfigs,
} from "./proxy-configs.ts";
import { consola } from "../system/consola.ts";

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
