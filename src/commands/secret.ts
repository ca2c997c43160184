import { defineCommand } from "citty";
import { dirname, join } from "node:path";
import { ADMIN_TOKEN_FILE } from "../config/secret.ts";
import { appSecretFile, resolveApps } from "../config/apps.ts";
import { findConfigFile, loadConfig, loadedFromOf } from "../config/load.ts";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import { generateSecret, readSecretFile, SECRET_FILE, writeSecretFile } from "../config/secret.ts";
import { ensurePrivateDir } from "../system/files.ts";
import { auditCli } from "./_audit.ts";
import { controlDir, cwdArg } from "./_cwd.ts";

/** Where a secret is kept: a file the service generated (which these commands may replace), or the configuration. */
type Kept = { file: string; what: string } | { configured: string; what: string };

/** Where the configuration sets `key` (environment first: it wins), or undefined when it does not. */
function configuredAt(
  config: ResolvedConfig,
  cwd: string,
  key: "secret" | "adminToken",
  env: string,
): string | undefined {
  const loaded = loadedFromOf(config);
  if ((loaded?.env ?? process.env)[env] !== undefined)
    return `${env} in the service's environment (its systemd unit's Environment= or EnvironmentFile=, say): change it there and restart the service`;
  if (loaded?.fileConfig?.[key] !== undefined)
    return `the ${key} key of ${findConfigFile(cwd)}: change it there (the running service reads the file again on its next request)`;
  return undefined;
}

/** The webhook secret `--app` names (or the single app's), and where it is kept. */
function webhookSecret(cwd: string, name: string | undefined): Kept {
  const config = loadConfig({ cwd });
  const apps = resolveApps(config, cwd);
  if (config.apps.length === 0) {
    if (name !== undefined)
      throw new Error(`--app ${name}: the configuration has no apps (single-app mode); leave out --app`);
    const what = "the webhook secret";
    const configured = configuredAt(config, cwd, "secret", "SERVICE_SECRET");
    return configured ? { configured, what } : { file: join(cwd, SECRET_FILE), what };
  }
  const names = apps.map((a) => a.name).join(", ");
  if (name === undefined)
    throw new Error(`several apps, each with its own secret: name one with --app (apps: ${names})`);
  const app = apps.find((a) => a.name === name);
  if (!app) throw new Error(`no app named "${name}" (apps: ${names})`);
  const what = `the secret of app "${name}"`;
  if (app.secret) return { configured: `its apps entry in ${findConfigFile(cwd)}: change it there`, what };
  return { file: appSecretFile(cwd, name), what };
}

/** The admin token, and where it is kept. */
function adminToken(cwd: string): Kept {
  const config = loadConfig({ cwd });
  const what = "the admin token";
  const configured = configuredAt(config, cwd, "adminToken", "SERVICE_ADMIN_TOKEN");
  return configured ? { configured, what } : { file: join(cwd, ADMIN_TOKEN_FILE), what };
}

/** The file a command may read or replace; throws, naming where to change it, for a configured secret. */
function fileOf(kept: Kept, action: string): string {
  if ("configured" in kept)
    throw new Error(
      `${kept.what} is not one the service generated, so it cannot ${action} it: it is set by ${kept.configured}`,
    );
  return kept.file;
}

/**
 * Writes a new secret into `file` (0600, atomic), and says what must change with it. The value is printed on a
 * terminal only: into a pipe or a journal it would be kept where it does not belong, so there the line says how to
 * read it (`readWith`). The running service uses it from its next request.
 */
function replace(what: string, file: string, readWith: string, then: string[]): void {
  ensurePrivateDir(dirname(file));
  const secret = generateSecret();
  writeSecretFile(file, secret);
  const shown = process.stdout.isTTY
    ? [`Replaced ${what}: a new one is saved to ${file} (mode 0600):`, "", `  ${secret}`, ""]
    : [
        `Replaced ${what}: a new one is saved to ${file} (mode 0600); not printed off a terminal, read it with: ${readWith}`,
      ];
  process.stdout.write([...shown, ...then, ""].join("\n"));
}

const appArg = {
  type: "string",
  valueHint: "name",
  description: "Multi-app mode: the app whose secret it is (each app has its own)",
} as const;

export const secretCommand = defineCommand({
  meta: {
    name: "secret",
    description:
      "show: print the webhook secret the service generated (.service.secret, or .service/secrets/<app>.secret). " +
      "rotate: replace it with a new one (0600, atomic); the running service uses it from its next request and refuses " +
      "the old one, so the forge's webhook needs the new value. A secret set by SERVICE_SECRET or the config file is " +
      "changed where it is set.",
  },
  args: {
    action: { type: "positional", required: true, description: "show | rotate" },
    app: appArg,
    cwd: cwdArg,
  },
  run({ args }) {
    const cwd = controlDir(args.cwd);
    if (args.action !== "show" && args.action !== "rotate")
      throw new Error(`unknown action "${args.action}": service secret show, or service secret rotate`);
    const kept = webhookSecret(cwd, args.app);
    const file = fileOf(kept, args.action === "show" ? "show" : "replace");
    if (args.action === "show") {
      const secret = readSecretFile(file);
      if (!secret)
        throw new Error(
          `${kept.what} does not exist yet: the service generates ${file} at its first start (service secret rotate${args.app ? ` --app ${args.app}` : ""} makes one now)`,
        );
      process.stdout.write(`${secret}\n`);
      return;
    }
    const readWith = `service secret show${args.app ? ` --app ${args.app}` : ""}${args.cwd === undefined ? "" : ` --cwd ${cwd}`}`;
    replace(kept.what, file, readWith, [
      "The running service uses it from its next request and refuses the old one. Update every sender now:",
      "- the forge's webhook: its Secret field (GitHub, Gitea, Forgejo, Bitbucket) or Secret token (GitLab), under the",
      "  repository's Settings → Webhooks;",
      "- a CI job or script that sends X-Service-Secret or Authorization: Bearer.",
    ]);
  },
});

export const adminTokenCommand = defineCommand({
  meta: {
    name: "admin-token",
    description:
      "rotate: replace the generated admin token (.service/admin.token) with a new one (0600, atomic). The running " +
      "service uses it from its next request: the old token and every dashboard session end. A token set by " +
      "SERVICE_ADMIN_TOKEN or the config file is changed where it is set.",
  },
  args: {
    action: { type: "positional", required: true, description: "rotate" },
    cwd: cwdArg,
  },
  run({ args }) {
    const cwd = controlDir(args.cwd);
    if (args.action !== "rotate") throw new Error(`unknown action "${args.action}": service admin-token rotate`);
    const kept = adminToken(cwd);
    const file = fileOf(kept, "replace");
    replace(kept.what, file, `cat ${file}`, [
      "The running service uses it from its next request: the old token is refused and every dashboard session ends",
      "(log in again). Update whatever sends it: scripts calling /api/, a Prometheus scrape's bearer token.",
    ]);
    // Who rotated it: the running service's own line says only that it changed.
    auditCli(cwd, { action: "token rotated", target: "admin", outcome: "ok" });
  },
});
