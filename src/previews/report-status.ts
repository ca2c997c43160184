/**
 * A preview as a commit status on its head (Gitea and Forgejo, Bitbucket; GitLab's beside its environment): named
 * `preview`, pointing at the preview once it is up. The requests are the forges' own (notify/commit-status.ts).
 */
import { statusRequest } from "../notify/commit-status.ts";
import { forgeCall, type Problems } from "./forge-call.ts";
import type { PreviewReport } from "./report-types.ts";
import { descriptionOf, linkOf, stateOf, statusTargetOf } from "./report-words.ts";

export async function reportStatus(report: PreviewReport, problems: Problems): Promise<void> {
  const target = statusTargetOf(report);
  const request = statusRequest(target, report.preview.head, stateOf(report), descriptionOf(report), linkOf(report));
  await forgeCall(target, `status ${target.context}`, request, problems);
}
