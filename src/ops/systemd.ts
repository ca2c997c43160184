import type { ResolvedApp } from "../config/apps.ts";
import { STRICT_ENV } from "../config/load.ts";
import { deployLimitSeconds } from "./deploy-limit.ts";
import { currentUserName, idOf, passwdEntries } from "../system/user.ts";

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

export function userExists(name: string): boolean {
  return passwdEntries().some(([user]) => user === name) || idOf("-u", "--", name) !== undefined;
}

/**
 * The user to run as: `--user`, else the one who called sudo, else the current one. The runtime's own user info
 * says "unknown" without USER, so the current user is looked up by uid. A name that is not a user throws: a
 * unit with a wrong `User=` fails only when systemd starts it.
 */
export function unitUser(given: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const [name, from] = given
    ? [given, "--user"]
    : env.SUDO_USER
      ? [env.SUDO_USER, "SUDO_USER"]
      : env.USER
        ? [env.USER, "USER"]
        : [currentUserName(), ""];
  if (!name) throw new Error(`cannot tell the name of the current user (uid ${process.getuid?.()}): pass --user NAME`);
  if (!userExists(name))
    throw new Error(
      `user ${JSON.stringify(name)}${from ? ` (${from})` : ""} does not exist on this machine: pass --user with an existing user`,
    );
  return name;
}

/** The unit's descriptor limit: room for MAX_CONNECTIONS proxied connections and a large reserve. */
export const UNIT_NOFILE = 65536;

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
# An unreadable or invalid config file stops the start instead of falling back to the defaults (0.0.0.0, a new secret).
Environment=${STRICT_ENV}=1
Restart=on-failure
RestartSec=2
# SIGTERM to the service only: it refuses new deploys, cancels queued ones and finishes the running one.
KillMode=mixed
KillSignal=SIGTERM
# Descriptors: the ports hold connections up to a bound below this limit and keep the rest for deploys
# (see "connection floods" in docs/reliability.md); without it a unit may start with a soft limit of 1024.
LimitNOFILE=${UNIT_NOFILE}
# The service's cgroup is its own to divide: each deploy with \`limits\` gets a child group (docs/production.md).
Delegate=yes
# The longest a deploy can take (pull and run script each up to runTimeoutMs, a rollback's run too, plus 60 s),
# so a running deploy can finish before systemd kills it.
TimeoutStopSec=${stopSeconds}

[Install]
WantedBy=multi-user.target
`;
}
