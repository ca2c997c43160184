import { isAbsolute, relative, resolve } from "node:path";
import { isLoopback } from "../system/address.ts";
import type { ResolvedApp } from "../config/apps.ts";
import { statusContextOf } from "../config/forge.ts";
import { describeGate } from "../config/gate.ts";
import { CONFIG_FILE_NAMES, findConfigFile, loadedFromOf } from "../config/load.ts";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import { scriptLines } from "../steps/script.ts";

/**
 * The start banner (README "Quick start"). Its first lines: `listening on http://localhost:<port>`, the
 * repository, the run command and `Auth: required`. Around them, what an operator checks first: the address
 * actually bound, where the run script comes from (a repository's config file may replace it after each pull),
 * and each app's filters, polling, releases, gate and status context when set. One block per app.
 */
export function banner(port: number, config: ResolvedConfig, apps: ResolvedApp[], cwd: string): string[] {
  const multiApp = config.apps.length > 0;
  const lines = [`listening on http://localhost:${port}`];
  lines.push(boundLine(config.hostname));
  for (const app of apps) {
    const prefix = multiApp ? `app ${app.name}: ` : "";
    lines.push(
      ...[
        `webhook: POST ${multiApp ? app.host : ""}${app.path}`,
        `repo: ${app.repoPath}`,
        `run: ${scriptLines(app.runScript).join("; ")}`,
        `run from: ${scriptSource(config, app, cwd)}`,
        ...appSettings(app),
      ].map((line) => `${prefix}${line}`),
    );
  }
  lines.push("Auth: required");
  return lines;
}

/** The address bound: `bound to 0.0.0.0: every interface`, `bound to 127.0.0.1 (loopback: this machine only)`. */
function boundLine(hostname: string): string {
  const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
  if (isLoopback(hostname)) return `bound to ${shown} (loopback: this machine only)`;
  const every = hostname === "0.0.0.0" || hostname === "::" ? ": every interface" : "";
  return `bound to ${shown}${every}`;
}

/** The lines of an app's settings that change which deliveries deploy, shown only when set. */
function appSettings(app: ResolvedApp): string[] {
  const lines: string[] = [];
  if (app.branch) lines.push(`branch: ${app.branch} (pushes to other branches are skipped)`);
  if (app.events?.length) lines.push(`events: ${app.events.join(", ")} (other events are skipped)`);
  if (app.pollIntervalMs !== undefined)
    lines.push(
      `polling: every ${seconds(app.pollIntervalMs)} (the remote's ${app.branch ?? "branch"} is asked for new commits)`,
    );
  if (app.releases) lines.push(`releases: ${app.releases.path} (keep ${app.releases.keep})`);
  if (app.gate) lines.push(`gate: ${describeGate(app.gate)}`);
  if (app.status) lines.push(`status context: ${statusContextOf(app.status, app.name)}`);
  return lines;
}

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`);

/**
 * Where the run script comes from, and whether a pull can replace it (docs/configuration.md "Config from the
 * repository"): a config file in the repository decides after each pull, unless SERVICE_RUN_SCRIPT (single
 * app) wins, or SERVICE_CONFIG points outside the repository.
 */
function scriptSource(config: ResolvedConfig, app: ResolvedApp, cwd: string): string {
  const loaded = loadedFromOf(config);
  const env = loaded?.env ?? process.env;
  const multiApp = app.name !== undefined;
  if (!multiApp && env.SERVICE_RUN_SCRIPT !== undefined)
    return "SERVICE_RUN_SCRIPT; it wins over every config file, the repository's too";
  const file = findConfigFile(cwd, env);
  const from = multiApp
    ? `its apps entry in ${file}`
    : file && loaded?.fileConfig?.runScript !== undefined
      ? file
      : "the default";
  if (env.SERVICE_CONFIG && !inside(app.repoPath, resolve(cwd, env.SERVICE_CONFIG)))
    return `${from}; SERVICE_CONFIG points outside the repository, so a pull does not change it`;
  if (file && !multiApp && inside(app.repoPath, file))
    return `${file}, the repository's own: read again after each pull`;
  const repoFile = env.SERVICE_CONFIG
    ? `${resolve(cwd, env.SERVICE_CONFIG)} (SERVICE_CONFIG)`
    : `a ${CONFIG_FILE_NAMES[0]} (or ${CONFIG_FILE_NAMES.slice(1).join(", ")}) in the repository`;
  const entry = multiApp ? ` (its apps entry "${app.name}", or its top-level keys)` : "";
  return `${from}; after each pull, ${repoFile}${entry} replaces it when present`;
}

function inside(dir: string, file: string): boolean {
  const rel = relative(dir, file);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}
