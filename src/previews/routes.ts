/**
 * The previews' routing (docs/previews.md "Routing"): host → port for every running preview, written to
 * `.service/previews/routes.json` and `previews.caddy` after each change, then `previews.onChange` when set.
 */
import { join, resolve } from "node:path";
import { ensurePrivateDir, writeFileAtomic } from "../system/files.ts";
import { defaultLogger, type Logger } from "../system/logger.ts";
import { runProcess } from "../system/process.ts";
import { shown } from "../system/shown.ts";
import { scriptEnv } from "../steps/env.ts";
import type { Preview, PreviewSettings } from "./types.ts";

export const PREVIEWS_DIR = join(".service", "previews");
export const ROUTES_FILE = "routes.json";
export const CADDY_FILE = "previews.caddy";

/** How long `onChange` may run before its process group is stopped. */
export const ON_CHANGE_TIMEOUT_MS = 60_000;

/** The previews whose port is theirs now: up, or being built again in place. */
const ROUTED = new Set<Preview["status"]>(["running", "building"]);

/** One route: where the host's requests go. */
export interface Route {
  host: string;
  port: number;
  /** The site as Caddy names it: the scheme, the host and the URL's own port when it names one. */
  site: string;
  app: string;
  number: number;
}

/** The routes of `previews`, and why each preview left out was left out. */
export function routesOf(previews: readonly Preview[]): { routes: Route[]; left: string[] } {
  const routes: Route[] = [];
  const left: string[] = [];
  const seen = new Map<string, string>();
  for (const preview of previews) {
    if (!ROUTED.has(preview.status)) continue;
    const who = `${shown(String(preview.app))} #${preview.number}`;
    const route = routeOf(preview);
    if (typeof route === "string") {
      left.push(`${who}: ${route}`);
      continue;
    }
    const taken = seen.get(route.site);
    if (taken) {
      left.push(`${who}: ${route.site} is routed to ${taken} already`);
      continue;
    }
    seen.set(route.site, who);
    routes.push(route);
  }
  routes.sort((a, b) => (a.site < b.site ? -1 : a.site > b.site ? 1 : 0));
  return { routes, left };
}

/** The route of one preview, or why it has none. */
function routeOf(preview: Preview): Route | string {
  if (!Number.isInteger(preview.port) || preview.port < 1 || preview.port > 65535)
    return `its port ${JSON.stringify(preview.port)} is not a port`;
  let url: URL;
  try {
    url = new URL(String(preview.url));
  } catch {
    return "its url is not a URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "its url is neither http nor https";
  const host = url.hostname;
  // Only what a host name may hold: nothing a Caddyfile would read as syntax (braces, spaces, quotes, newlines).
  if (!/^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/.test(host) || host.includes(".."))
    return `its host ${JSON.stringify(shown(host).slice(0, 80))} holds more than a-z, 0-9, '.' and '-'`;
  const port = url.port ? `:${url.port}` : "";
  return {
    host,
    port: preview.port,
    site: `${url.protocol}//${host}${port}`,
    app: preview.app,
    number: preview.number,
  };
}

/** routes.json: host → port, and each route in full. */
export function routesJson(routes: readonly Route[]): string {
  const hosts: Record<string, number> = {};
  for (const route of routes) hosts[route.host] ??= route.port;
  return `${JSON.stringify({ hosts, routes }, null, 2)}\n`;
}

/** A Caddyfile snippet: one site per preview, proxied to its port on loopback. */
export function caddySnippet(routes: readonly Route[]): string {
  const head = "# The previews' sites, written by service after each change of a preview: do not edit.\n";
  return head + routes.map((r) => `\n${r.site} {\n\treverse_proxy 127.0.0.1:${r.port}\n}\n`).join("");
}

/** Runs after one change at a time: two changes never interleave their writes or their `onChange`. */
let chain: Promise<unknown> = Promise.resolve();

/** Called after every change of an app's previews, with all of the server's previews as they are now. */
export function previewsChanged(
  cwd: string,
  previews: readonly Preview[],
  settings: readonly PreviewSettings[],
  options: { logger?: Logger; timeoutMs?: number } = {},
): Promise<void> {
  const run = chain.then(async () => {
    try {
      await writeAndTell(cwd, previews, settings, options);
    } catch (error) {
      // Never thrown at the life cycle: a preview's state is no less true for its routes not being written.
      (options.logger ?? defaultLogger()).error(`previews: the routes could not be made: ${shown(String(error))}`);
    }
  });
  chain = run.catch(() => undefined);
  return run;
}

async function writeAndTell(
  cwd: string,
  previews: readonly Preview[],
  settings: readonly PreviewSettings[],
  options: { logger?: Logger; timeoutMs?: number },
): Promise<void> {
  const logger = options.logger ?? defaultLogger();
  const dir = resolve(cwd, PREVIEWS_DIR);
  const { routes, left } = routesOf(previews);
  for (const why of left) logger.warn(`previews: not routed: ${why}`);
  const routesFile = join(dir, ROUTES_FILE);
  const caddyFile = join(dir, CADDY_FILE);
  try {
    ensurePrivateDir(dir);
    // Readable by a proxy's user (Caddy imports the snippet); the directory itself stays private unless opened.
    writeFileAtomic(routesFile, routesJson(routes), 0o644);
    writeFileAtomic(caddyFile, caddySnippet(routes), 0o644);
  } catch (error) {
    logger.error(`previews: the routes could not be written to ${dir}: ${(error as Error).message}`);
    return;
  }
  const commands = [...new Set(settings.map((s) => s.onChange).filter((c): c is string => Boolean(c?.trim())))];
  for (const command of commands) await onChange(command, cwd, routesFile, caddyFile, logger, options.timeoutMs);
}

/** `previews.onChange`, with the routes file as its argument and in its environment; a failure is logged. */
async function onChange(
  command: string,
  cwd: string,
  routesFile: string,
  caddyFile: string,
  logger: Logger,
  timeoutMs = ON_CHANGE_TIMEOUT_MS,
): Promise<void> {
  let output = "";
  const exit = await runProcess(["/bin/sh", "-c", command, "sh", routesFile], {
    cwd: resolve(cwd),
    env: scriptEnv(process.env, { SERVICE_PREVIEW_ROUTES: routesFile, SERVICE_PREVIEW_CADDY: caddyFile }),
    deadline: Date.now() + timeoutMs,
    onOutput: (_stream, data) => {
      if (output.length < 2000) output += new TextDecoder().decode(data);
    },
  });
  const said = shown(output).trim().slice(0, 300);
  if (exit.timedOut)
    logger.error(`previews: onChange did not end within ${timeoutMs} ms and was stopped${said ? `: ${said}` : ""}`);
  else if (exit.exitCode !== 0)
    logger.error(`previews: onChange failed (${exit.error ?? `exit code ${exit.exitCode}`})${said ? `: ${said}` : ""}`);
}
