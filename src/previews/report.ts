/**
 * Telling the pull request about its preview (docs/previews.md "On the pull request"): the forge's deployment or
 * commit status, and with `previews.comment` the one comment kept current. A failure is said, never thrown: a
 * preview never fails because its forge did not answer.
 */
import type { StatusTarget } from "../config/forge.ts";
import type { Preview, PreviewSettings } from "./types.ts";

/** building: a deploy started; ok / failed: it ended; teardown: the preview is gone. */
export type PreviewPhase = "building" | "ok" | "failed" | "teardown";

export interface PreviewReport {
  /** The app's `status` settings resolved (provider, repo, apiUrl, token). */
  target: StatusTarget;
  settings: PreviewSettings;
  preview: Preview;
  phase: PreviewPhase;
  /** The deploy's log on the dashboard, when `adminPublicUrl` is set. */
  logUrl?: string;
  durationMs?: number;
  /** Why it failed, in a few words. */
  reason?: string;
}

/** What the report learnt, to keep in the preview (its deployment and comment ids), and what went wrong. */
export interface PreviewReported {
  keep: Partial<Pick<Preview, "forgeDeploymentId" | "commentId">>;
  problems: string[];
}

export async function reportPreview(_report: PreviewReport): Promise<PreviewReported> {
  return { keep: {}, problems: [] };
}
