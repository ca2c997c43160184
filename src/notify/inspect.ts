/**
 * What `service check` says about `status` and `notify`: their values (tokens masked), their problems, and
 * `--send-test`, one test notification per target.
 */
import { spawnSync } from "node:child_process";
import { Redaction } from "../system/redact.ts";
import { notifyPayload, notifyRequest } from "./payloads.ts";
import { OutboundCalls } from "./outbound.ts";
import { DEFAULT_ON, DEFAULT_OUTBOUND_TIMEOUT_MS, type NotifyTarget, type StatusSettings } from "../config/schema.ts";
import { statusToken } from "../config/notify.ts";
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
  return targets
    .map((t) => `${t.format ?? "json"} to ${hostOf(t.url)} on ${(t.on ?? DEFAULT_ON).join("/")}`)
    .join("; ");
}

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
  if (!app.status) return [];
  const label = app.name ? `app "${app.name}": ` : "";
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
): Promise<{ lines: string[]; failed: number }> {
  const lines: string[] = [];
  let failed = 0;
  // Apps that inherit the top level's targets share them: each target gets one test, not one per app.
  const seen = new Set<string>();
  for (const app of apps) {
    const redaction = new Redaction(outboundCredentials(app, cwd, env));
    const targets = (app.notify ?? [])
      .map((target, index) => ({ target, index }))
      .filter(({ target }) => {
        const key = JSON.stringify([target.url, target.format ?? "json", target.headers ?? {}]);
        return !seen.has(key) && seen.add(key);
      });
    const calls = targets.map(async ({ target, index }) => {
      const payload = {
        ...notifyPayload({
          id: "00000000-0000-0000-0000-000000000000",
          app: app.name,
          trigger: "cli",
          outcome: "failed",
          output: ["this is a test notification from service check --send-test"],
        }),
        test: true,
      };
      const answer = await new OutboundCalls().send(notifyRequest(target, payload), {
        timeoutMs: target.timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS,
      });
      if (!answer.ok) failed++;
      const who = `${app.name ? `app ${app.name}, ` : ""}notify entry ${index + 1} (${target.format ?? "json"} to ${hostOf(target.url)})`;
      return `${who}: ${answer.ok ? "sent" : "failed"}: ${redaction.text(answer.detail)}`;
    });
    lines.push(...(await Promise.all(calls)));
  }
  if (lines.length === 0) lines.push("no notify targets configured: nothing sent");
  return { lines, failed };
}
