/**
 * The one list of the secrets a deploy must not show (docs/security.md "What stays out of the output"), built the
 * same way for the server, `service deploy` and `service rollback`: every app's webhook secret, the admin token,
 * and the credentials the service sends (status tokens, notification URLs and headers) in every form they
 * travel in (and the channels' token and password files). The values a deploy reads from its own files (`envFile`, `env: { file }`) join it per deploy.
 */
import { resolve } from "node:path";
import { appSecretFile, type ResolvedApp } from "./apps.ts";
import { channelSecrets } from "./channels.ts";
import { basicCredential, STATUS_TOKEN_ENV, statusToken } from "./notify.ts";
import type { NotifyTarget, StatusSettings } from "./schema-notify.ts";
import type { ResolvedConfig } from "./schema-resolved.ts";
import { ADMIN_TOKEN_FILE, readSecretFile, SECRET_FILE } from "./secret.ts";
import { readNoFollow } from "../system/files.ts";

/** A secret file's value; undefined when it is missing or unusable (then it cannot be in any output either). */
function secretIn(file: string): string | undefined {
  try {
    return readSecretFile(file);
  } catch {
    return undefined;
  }
}

/** The admin token in `.service/admin.token`, if there is a usable one. */
export const adminTokenIn = (cwd: string) => secretIn(resolve(cwd, ADMIN_TOKEN_FILE));

/** An app's webhook secret: configured, or from its secret file (undefined when there is none usable). */
export const appSecretOf = (app: ResolvedApp, cwd: string) =>
  app.secret ?? secretIn(app.name ? appSecretFile(cwd, app.name) : resolve(cwd, SECRET_FILE));

/**
 * Every secret a deploy of any of `apps` must keep out of its stream, log files, result and notifications. The
 * secrets that live in files are read now: what a command finds is what the server uses.
 */
export function deploySecrets(
  config: Pick<ResolvedConfig, "adminToken"> & Partial<Pick<ResolvedConfig, "adminOidc" | "adminTrustedHeader">>,
  apps: ResolvedApp[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): string[] {
  const secrets = [config.adminToken || adminTokenIn(cwd), ...peopleSecrets(config, cwd)];
  for (const app of apps) {
    secrets.push(appSecretOf(app, cwd));
    secrets.push(...outboundCredentials(app, cwd, env));
  }
  return [...new Set(secrets.filter((secret): secret is string => !!secret))];
}

/** The OpenID client's secret and the trusted proxy's (each its file's first line), when their files can be read. */
export function peopleSecrets(
  config: Partial<Pick<ResolvedConfig, "adminOidc" | "adminTrustedHeader">>,
  cwd: string,
): string[] {
  const files = [config.adminOidc?.clientSecretFile, config.adminTrustedHeader?.secretFile];
  return files.flatMap((file) => {
    if (!file) return [];
    try {
      const line = (readNoFollow(resolve(cwd, file), true).split("\n")[0] ?? "").trim();
      return line ? [line] : [];
    } catch {
      return [];
    }
  });
}

/**
 * The credentials of the outbound settings (status tokens, notification URLs, header values), with the forms
 * they are sent in: an API that echoes `Authorization: Basic …` back must not put `user:password` into a log
 * in base64 either.
 */
export function outboundCredentials(
  settings: { status?: StatusSettings; notify?: NotifyTarget[] },
  cwd: string,
  env: NodeJS.ProcessEnv,
): string[] {
  const out: string[] = [];
  const { status } = settings;
  if (status) {
    const token = statusToken(status, cwd, env);
    out.push(status.token ?? "", env[STATUS_TOKEN_ENV] ?? "");
    if ("token" in token) out.push(token.token, ...(token.token.includes(":") ? [basicCredential(token.token)] : []));
    if (status.apiUrl) out.push(...urlCredentials(status.apiUrl));
  }
  for (const target of settings.notify ?? []) {
    out.push(target.url, ...urlCredentials(target.url));
    for (const value of Object.values(target.headers ?? {})) out.push(value, ...headerCredentials(value));
    out.push(...channelSecrets(target, cwd));
  }
  return out.filter(Boolean);
}

/** `https://user:password@host/`: fetch sends it as Basic; the password and that form are secrets too. */
function urlCredentials(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  if (!parsed.username && !parsed.password) return [];
  const user = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  return [password, `${user}:${password}`, basicCredential(`${user}:${password}`)];
}

/** `Basic <base64>` or `Bearer <token>`: the credential alone, and for Basic what it decodes to. */
function headerCredentials(value: string): string[] {
  const match = /^(\S+)\s+(\S+)$/.exec(value.trim());
  if (!match) return [];
  const [, scheme, credential] = match as unknown as [string, string, string];
  if (scheme.toLowerCase() !== "basic") return [credential];
  const decoded = Buffer.from(credential, "base64").toString("utf8");
  return [credential, ...(/^[\x20-\x7e]+:[\x20-\x7e]*$/.test(decoded) ? [decoded] : [])];
}
