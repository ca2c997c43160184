/**
 * The words of the one comment on a pull request: the preview's outcome, its URL, commit, branch and title, the
 * build's duration, the time, and a link to the log when the dashboard has a public URL. The outsiders' words
 * (title, branch, reason) go through markdown.ts.
 */
import { shown } from "../system/shown.ts";
import { link, outsider } from "./markdown.ts";
import type { PreviewReport } from "./report-types.ts";

const HEADLINES: Record<PreviewReport["phase"], string> = {
  building: "🔨 Building the preview",
  ok: "✅ The preview is up",
  failed: "❌ The preview failed",
  teardown: "🧹 The preview was removed",
};

/** A duration in words: `45 s`, `3 min 5 s`, `1 h 2 min`. */
export function durationWords(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** The comment's Markdown (without its marker). `now` is the time it says it was written. */
export function commentBody(report: PreviewReport, now = new Date()): string {
  const { preview } = report;
  const app = shown(preview.app).replace(/[^A-Za-z0-9._-]/g, "_");
  const lines = [`**${HEADLINES[report.phase]}** (\`${app}\`)`, ""];
  const url = link(preview.url);
  if (url && report.phase !== "teardown") lines.push(`- URL: ${url}`);
  lines.push(`- Commit: \`${preview.head.replace(/[^0-9a-f]/g, "").slice(0, 12)}\``);
  lines.push(`- Branch: ${outsider(preview.branch)}`);
  lines.push(`- Title: ${outsider(preview.title)}`);
  const outcome =
    report.phase === "failed"
      ? `failed${report.reason || preview.reason ? `: ${outsider(report.reason ?? preview.reason ?? "")}` : ""}`
      : { building: "building", ok: "up", teardown: "removed" }[report.phase];
  lines.push(`- Outcome: ${outcome}`);
  if (report.durationMs !== undefined && Number.isFinite(report.durationMs))
    lines.push(`- Duration: ${durationWords(report.durationMs)}`);
  lines.push(`- Updated: ${now.toISOString().slice(0, 16).replace("T", " ")} UTC`);
  const log = link(report.logUrl, "the deploy's log");
  if (log) lines.push(`- Log: ${log}`);
  return `${lines.join("\n")}\n`;
}
