/**
 * What a preview's report says on the forge, whatever the forge: its environment's and its status's names, the
 * state of each phase, the one-line description, the links. Statuses and deployments show text, not Markdown: a
 * reason is shown on one line, cut.
 */
import type { StatusTarget } from "../config/forge.ts";
import type { StatusState } from "../notify/commit-status.ts";
import { shown } from "../system/shown.ts";
import type { PreviewReport } from "./report-types.ts";

/** `<prefix>/pr-<n>`; in multi-app mode `<prefix>/<app>/pr-<n>`, so two apps' previews of one repository never meet. */
export function environmentOf(prefix: "preview" | "review", report: PreviewReport): string {
  const { app, number } = report.preview;
  return app === "default" ? `${prefix}/pr-${number}` : `${prefix}/${app}/pr-${number}`;
}

/** The commit status's context (Gitea, GitLab, Bitbucket): `preview`, or `preview/<app>` in multi-app mode. */
export function statusTargetOf(report: PreviewReport): StatusTarget {
  const { app } = report.preview;
  return { ...report.target, context: app === "default" ? "preview" : `preview/${app}` };
}

/** A phase as a commit status's state; a teardown keeps the state of the last outcome. */
export function stateOf(report: PreviewReport): StatusState {
  switch (report.phase) {
    case "building":
      return "pending";
    case "ok":
      return "success";
    case "failed":
      return "failure";
    case "teardown":
      return report.preview.outcome === "ok" ? "success" : report.preview.outcome === "failed" ? "failure" : "error";
  }
}

/** The reason, shown on one line and cut. */
export function reasonOf(report: PreviewReport, max = 100): string | undefined {
  const reason = shown(report.reason ?? report.preview.reason ?? "").trim();
  if (!reason) return undefined;
  return reason.length > max ? `${reason.slice(0, max - 1)}…` : reason;
}

/** One line for a status or a deployment status. */
export function descriptionOf(report: PreviewReport): string {
  const commit = report.preview.head.slice(0, 7);
  switch (report.phase) {
    case "building":
      return `Building the preview of ${commit}`;
    case "ok":
      return `Preview of ${commit} is up`;
    case "failed": {
      const reason = reasonOf(report);
      return `Preview of ${commit} failed${reason ? `: ${reason}` : ""}`;
    }
    case "teardown":
      return "Preview removed";
  }
}

/** Where a status points: the preview once it is up, the log while it builds or when it failed. */
export function linkOf(report: PreviewReport): string | undefined {
  if (report.phase === "ok") return report.preview.url;
  if (report.phase === "teardown") return undefined;
  return report.logUrl ?? (report.phase === "building" ? report.preview.url : undefined);
}
