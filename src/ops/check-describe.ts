/**
 * `service check`'s words for what an app is configured with (ops/check.ts): each setting of an app's block, and
 * the values of the top-level table that are no plain string (the gate, the limits, the releases).
 */
import type { ResolvedApp } from "../config/apps.ts";
import { describeFreeze } from "../config/freeze.ts";
import { describeGate } from "../config/gate.ts";
import type { ReleaseSettings } from "../config/releases.ts";
import { describeLimits } from "../steps/limits.ts";
import { scriptLines } from "../steps/script.ts";
import { triggerSettings } from "../triggers/check.ts";

export const seconds = (ms: number) => `${ms % 1000 === 0 ? ms / 1000 : (ms / 1000).toFixed(1)} s`;

/** The releases in force, as the check prints them: none, or the path, how many are kept and what is shared. */
export function describeReleases(releases: ReleaseSettings | undefined): string {
  if (!releases) return "(none: pull and run in repoPath)";
  const shared = releases.shared?.length ? `, shared: ${releases.shared.join(", ")}` : "";
  const carry = releases.carry?.length ? `, carry: ${releases.carry.join(", ")}` : "";
  return `${releases.path} (keep ${releases.keep}${shared}${carry})`;
}

/** GitHub deployment events: off, or on with who may create one. */
export function describeDeploymentEvents(app: Pick<ResolvedApp, "deploymentEvents" | "deploymentCreators">): string {
  if (!app.deploymentEvents) return "off";
  return `on (created by ${app.deploymentCreators?.length ? app.deploymentCreators.join(", ") : "anyone"})`;
}

/** A URL as shown: a password in it is masked. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = "***";
    return parsed.toString();
  } catch {
    return url;
  }
}

/** An app's settings as `service check` shows them under the app (the top-level table shows a single app's). */
export function appSettings(app: ResolvedApp): { label: string; value: string }[] {
  const check = app.healthCheckUrl ? `GET ${withoutPassword(app.healthCheckUrl)}` : app.healthCheck;
  return [
    { label: "run", value: scriptLines(app.runScript).join("; ") },
    { label: "branch", value: app.branch ?? "any" },
    { label: "tags", value: app.tags ?? "none" },
    { label: "pull", value: app.pull },
    { label: "events", value: app.events?.length ? app.events.join(", ") : "any" },
    {
      label: "health check",
      value: check
        ? `${check} (within ${seconds(app.healthCheckTimeoutMs)}, every ${seconds(app.healthCheckIntervalMs)})`
        : "none",
    },
    { label: "rollback", value: app.rollbackOnFailure ? "on failure" : "off" },
    { label: "polling", value: app.pollIntervalMs === undefined ? "off" : `every ${seconds(app.pollIntervalMs)}` },
    { label: "gate", value: describeGate(app.gate) },
    { label: "limits", value: describeLimits(app.limits) || "none" },
    { label: "deployment events", value: describeDeploymentEvents(app) },
    { label: "freeze", value: describeFreeze(app.freeze) },
    { label: "catch up", value: app.catchUp ? "on" : "off" },
    ...triggerSettings(app),
  ];
}
