/**
 * The server's start once its webhook port is open (the serve command, serve.ts, opened it): the secrets, the admin
 * token and the HTTPS question, the server on that port, the stop signals, the start check, the banner.
 */
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureAppSecrets, resolveApps } from "../config/apps.ts";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import { ensureWebhookSecret, SECRET_FILE, secretFileWarning } from "../config/secret.ts";
import type { WebhookPort } from "../http/listen.ts";
import { startCheck } from "../ops/start-check.ts";
import { afterStart } from "../runtime/gc.ts";
import { createServiceServer } from "../server.ts";
import { serviceConsole as consola, writeOut } from "../system/logger.ts";
import { isTerminal } from "../system/terminal.ts";
import { banner } from "./_banner.ts";
import { STOP_SIGNALS } from "./_guard.ts";

/** Starts the server of `config` on `webhookPort` (which its caller closes when this throws). */
export async function serveOn(config: ResolvedConfig, webhookPort: WebhookPort): Promise<void> {
  const apps = resolveApps(config, process.cwd());
  if (config.apps.length === 0) {
    const secret = ensureWebhookSecret(config);
    if (secret.generated) {
      writeOut(
        `Generated a webhook secret and saved it to ${SECRET_FILE} (mode 0600). It is shown only this once:\n\n  ${secret.secret}\n\n`,
      );
    }
  }
  const appSecrets = ensureAppSecrets(apps, process.cwd());
  for (const file of [join(process.cwd(), SECRET_FILE), ...appSecrets.map((a) => a.file)]) {
    const warning = secretFileWarning(file);
    if (warning) consola.warn(warning);
  }
  for (const added of appSecrets) {
    if (added.generated) {
      writeOut(
        `Generated a secret for app "${added.name}" and saved it to ${added.file} (mode 0600). It is shown only this once:\n\n  ${added.secret}\n\n`,
      );
    }
  }
  if (config.adminPort !== undefined) {
    const { ensureAdminToken } = await import("../admin/auth.ts");
    const admin = ensureAdminToken(config.adminToken, process.cwd());
    if (admin.generated) writeOut(await generatedTokenText(admin.token, admin.file!));
  }
  // The question's code (and the terminal's) is loaded only when it is asked: on a terminal.
  if (httpsQuestionWanted(config.httpsPrompt) && (await isTerminal(0)) && (await isTerminal(1))) {
    const { httpsAtStart, shouldAskAboutHttps } = await import("../ops/https.ts");
    if (shouldAskAboutHttps(config)) await httpsAtStart(config, apps);
  }

  const server = createServiceServer(config, { webhookPort });
  await server.start();
  // Both ends exit explicitly: a child a deploy left in the background (`app &`) still holds pipes the server
  // reads, which would keep the process alive after the listener closed.
  let signals = 0;
  const shutdown = async (signal: string) => {
    signals++;
    if (signals > 1) {
      consola.warn(`${signal} again: killing the running deploy's process tree`);
      // Let the killed deploys write their final log lines, briefly.
      await Promise.race([server.stop({ force: true }), sleep(2000)]);
      process.exit(1);
    }
    consola.info(
      `${signal}: accepting no new deploys, cancelling waiting ones, letting the running one finish (send it again to kill it)`,
    );
    await server.stop();
    // A second signal meanwhile forced the stop: that is an exit 1, whichever of the two stops ended first.
    process.exit(signals > 1 ? 1 : 0);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, () => void shutdown(signal));
  // The problems `service check` would list, said once the server listens (the check asks git about every
  // repository, which is no reason to keep the port closed) and before the banner: the banner says the start
  // is over, the check's process included (ops/start-check.ts).
  for (const problem of await startCheck()) consola.warn(problem);
  // Written once the stop signals are handled (whoever reads it may send one at once), in one write: whoever
  // reads the banner (a test, a supervisor's log) sees it whole, admin line included.
  const admin = server.adminUrl ? [`admin: ${server.adminUrl} (/healthz, /metrics, /api/)`] : [];
  writeOut(`${[...banner(server.port!, config, apps, process.cwd()), ...admin].join("\n")}\n`);
  afterStart();
}

/**
 * What the start says of a generated admin token. It opens the dashboard and every action of the admin API: shown
 * on a terminal only. Off one (systemd's journal, a pipe into a file), where it is kept and how to read it.
 */
async function generatedTokenText(token: string, file: string): Promise<string> {
  const saved = `Generated an admin token and saved it to ${file} (mode 0600).`;
  if (await isTerminal(1)) return `${saved} It is shown only this once:\n\n  ${token}\n\n`;
  return `${saved} It is not shown here (this output is not a terminal): read it with: cat ${file}\n`;
}

/** Whether the HTTPS question may be asked: the cheap part of shouldAskAboutHttps (ops/https.ts), checked first. */
function httpsQuestionWanted(httpsPrompt: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  return process.platform === "linux" && env.SERVICE_SKIP_HTTPS_PROMPT !== "1" && httpsPrompt;
}
