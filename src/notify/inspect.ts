/**
 * What `service check` says about `status` and `notify`: their values (tokens masked), their problems, and
 * `--send-test`, one test notification per target.
 */
import { spawnSync } from "node:child_process";
import { Redaction } from "../system/redact.ts";
import { notifyPayload } from "./payloads.ts";
import { deliver } from "./channels/deliver.ts";
import { OutboundCalls } from "./outbound.ts";
import { DEFAULT_ON, type NotifyTarget, type StatusSettings } from "../config/schema-notify.ts";
import { statusToken } from "../config/notify.ts";
import { channelSecret } from "../config/channels.ts";
import { statusContextOf, statusTarget } from "../config/forge.ts";
import { outboundCredentials } from "../config/deploy-secrets.ts";

export interface OutboundSettings {
  name?: string;
  repoPath: string;
  status?: StatusSettings;
  notify?: NotifyTarget[];
  deploymentEvents?: boolean;
}

const hidden = (secret: string) => `set (${secret.length} characters, hidden)`;

/** A one-line value for the check's table; never a token, a webhook URL or a header value. */
export function describeOutbound(
  key: "status" | "notify",
  value: unknown,
  cwd: string,
  env: NodeJS.ProcessEnv,
  app?: string,
): string {
  if (key === "status") {
    const status = value as StatusSettings | undefined;
    if (!status) return "(none)";
    const token = statusToken(status, cwd, env);
    const parts = [
      status.provider ?? "provider from origin",
      status.repo ?? "repo from origin",
      `token ${"token" in token ? hidden(token.token) : "missing"}`,
      `context ${statusContextOf(status, app)}`,
    ];
    if (status.apiUrl) parts.push(new Redaction([]).text(status.apiUrl));
    return parts.join(", ");
  }
  const targets = (value as NotifyTarget[] | undefined) ?? [];
  if (targets.length === 0) return "(none)";
  return targets.map((t) => `${where(t)} on ${(t.on ?? DEFAULT_ON).join("/")}`).join("; ");
}

/** An entry in words: its format and where it goes (an email's recipients and server; else the URL's host). */
const where = (t: NotifyTarget) =>
  t.format === "email"
    ? `email to ${(t.to ?? []).join(", ")} via ${t.host}:${t.port}`
    : `${t.format ?? "json"} to ${hostOf(t.url)}`;

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "(invalid URL)";
  }
}

function originOf(repoPath: string): string | undefined {
  try {
    const result = spawnSync("git", ["remote", "get-url", "origin"], {
      cwd: repoPath,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 10_000,
    });
    return result.status === 0 ? result.stdout.trim() || undefined : undefined;
  } catch {
    return undefined;
  }
}

/** What keeps commit statuses from working: a provider it cannot infer, no apiUrl, no repo, no token. */
export function outboundProblems(app: OutboundSettings, cwd: string, env: NodeJS.ProcessEnv): string[] {
  const label = app.name ? `app "${app.name}": ` : "";
  const files = channelFileProblems(app.notify ?? [], cwd).map((problem) => `${label}${problem}`);
  if (!app.status) return files;
  return [...files, ...statusProblems(app, label, cwd, env)];
}

/** The secret files of the notify entries that cannot be read now: their notifications would fail. */
function channelFileProblems(targets: NotifyTarget[], cwd: string): string[] {
  const problems: string[] = [];
  targets.forEach((target, index) => {
    for (const key of ["tokenFile", "passwordFile"] as const) {
      const file = target[key];
      const read = file ? channelSecret(file, cwd, key) : undefined;
      if (read && "problem" in read) problems.push(`notify entry ${index + 1} (${target.format}): ${read.problem}`);
    }
  });
  return problems;
}

function statusProblems(app: OutboundSettings, label: string, cwd: string, env: NodeJS.ProcessEnv): string[] {
  if (!app.status) return [];
  const target = statusTarget(app.status, originOf(app.repoPath), app.name, cwd, env);
  if ("problem" in target) return [`${label}${target.problem}`];
  // The deployments of deployment events get their statuses through the status settings' forge.
  if (app.deploymentEvents && target.provider !== "github")
    return [`${label}deploymentEvents: deployment events are GitHub's; status names ${target.provider}`];
  if (app.status.deployments && target.provider !== "github" && target.provider !== "gitlab")
    return [`${label}status: deployments is GitHub's and GitLab's only; ${target.provider} gets commit statuses alone`];
  return [];
}

/** Sends one test notification to every target of every app; one line per target with its answer. */
export async function sendTestNotifications(
  apps: OutboundSettings[],
  env: NodeJS.ProcessEnv,
  cwd = process.cwd(),
  only: { format?: string; command?: string } = {},
): Promise<{ lines: string[]; failed: number }> {
  const lines: string[] = [];
  let failed = 0;
  // Apps that inherit the top level's targets share them: each target gets one test, not one per app.
  const seen = new Set<string>();
  for (const app of apps) {
    const redaction = new Redaction(outboundCredentials(app, cwd, env));
    const all = app.notify ?? [];
    const targets = all
      .map((target, index) => ({ target, index }))
      .filter(({ target }) => only.format === undefined || (target.format ?? "json") === only.format)
      .filter(({ target }) => {
        const key = JSON.stringify(target);
        return !seen.has(key) && seen.add(key);
      });
    const calls = targets.map(async ({ target, index }) => {
      const payload = {
        ...notifyPayload({
          id: "00000000-0000-0000-0000-000000000000",
          app: app.name,
          trigger: "cli",
          outcome: "failed",
          output: [`this is a test notification from ${only.command ?? "service check --send-test"}`],
        }),
        test: true,
      };
      const answer = await deliver(new OutboundCalls(), target, payload, cwd);
      if (!answer.ok) failed++;
      const who = `${app.name ? `app ${app.name}, ` : ""}notify entry ${index + 1} (${where(target)})`;
      return `${who}: ${answer.ok ? "sent" : "failed"}: ${redaction.text(answer.detail)}`;
    });
    lines.push(...(await Promise.all(calls)));
  }
  if (lines.length === 0) lines.push("no notify targets configured: nothing sent");
  return { lines, failed };
}
