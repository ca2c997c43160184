/** What a preview's report is given and gives back (report.ts and the forges' reports; types only). */
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
