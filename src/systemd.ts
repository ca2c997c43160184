import { userInfo } from "node:os";
import { resolve } from "node:path";
import type { ResolvedApp } from "./apps.ts";
import { deployLimitSeconds } from "./deploy-limit.ts";

export interface UnitOptions {
  /** The working directory of the service: its config, `.service.secret` and `.service/logs/`. */
  workingDirectory: string;
  /** The command that starts the server, as argv. */
  execStart: string[];
  /** The user the service runs as. */
  user: string;
  /** Every app's settings (one in single-app mode): the stop timeout must outlast the longest deploy. */
  apps: Pick<ResolvedApp, "runTimeoutMs" | "rollbackOnFailure">[];
}

/** The user to run as: the one who called sudo, else the current one. */
export function defaultUser(env: NodeJS.ProcessEnv = process.env): string {
  return env.SUDO_USER || env.USER || userInfo().username;
}

/**
 * How this process was started, to start the same way under systemd: the single binary, bun + cli.ts, or node +
 * the npm package's `service` command. Only Bun loads a .env by itself (and Node rejects --no-env-file).
 */
export function currentExecStart(): string[] {
  const script = process.argv[1];
  const compiled = !script || script.startsWith("/$bunfs/") || resolve(script) === resolve(process.execPath);
  if (compiled) return [process.execPath];
  return process.versions.bun ? [process.execPath, "--no-env-file", resolve(script)] : [process.execPath, resolve(script)];
}

const quote = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `"${word.replace(/(["\\$`])/g, "\\$1")}"`);

/**
 * A systemd unit for the server. KillMode=mixed sends SIGTERM to the service alone (it stops taking deploys and
 * lets the running one finish); TimeoutStopSec outlasts the longest deploy before systemd kills what is left.
 */
export function systemdUnit(options: UnitOptions): string {
  const stopSeconds = deployLimitSeconds(options.apps);
  return `[Unit]
Description=Deploy webhook (service) in ${options.workingDirectory}
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=${options.user}
WorkingDirectory=${options.workingDirectory}
ExecStart=${options.execStart.map(quote).join(" ")}
Environment=SERVICE_SKIP_HTTPS_PROMPT=1
Restart=on-failure
RestartSec=2
# SIGTERM to the service only: it refuses new deploys, cancels queued ones and finishes the running one.
KillMode=mixed
KillSignal=SIGTERM
# The longest a deploy can take (pull and run script each up to runTimeoutMs, a rollback's run too, plus 60 s),
# so a running deploy can finish before systemd kills it.
TimeoutStopSec=${stopSeconds}

[Install]
WantedBy=multi-user.target
`;
}
