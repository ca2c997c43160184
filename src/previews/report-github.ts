/**
 * A preview as a GitHub Deployment (docs/previews.md "On the pull request"): one per build, on the head, in the
 * transient environment `preview/pr-<n>`, never production; its statuses `in_progress`, then `success` with the
 * preview's URL (the pull request shows "View deployment") or `failure` with the log, `inactive` once it is
 * replaced or torn down. The requests are the house's own (notify/deployments.ts).
 */
import { createDeploymentRequest, deploymentStatusRequest, idOf } from "../notify/deployments.ts";
import { authHeaders } from "../gate/forges.ts";
import { answerJson, forgeCall, type Problems, repoPath } from "./forge-call.ts";
import type { PreviewReport, PreviewReported } from "./report-types.ts";
import { descriptionOf, environmentOf } from "./report-words.ts";

const PREVIEW_KIND = { transient_environment: true, production_environment: false };

export async function reportGithub(report: PreviewReport, problems: Problems): Promise<PreviewReported["keep"]> {
  const { target, preview } = report;
  const environment = environmentOf("preview", report);
  const description = descriptionOf(report);
  const kept = toId(preview.forgeDeploymentId);
  const status = (id: number, state: "in_progress" | "success" | "failure" | "inactive", links: object) =>
    forgeCall(
      target,
      `deployment ${state}`,
      deploymentStatusRequest(target, id, state, state === "inactive" ? "Preview removed" : description, links),
      problems,
    );
  const create = async () => {
    const request = createDeploymentRequest(target, preview.head, environment, description, PREVIEW_KIND);
    return idOf((await forgeCall(target, "deployment", request, problems))?.body);
  };
  const log = report.logUrl ? { log_url: report.logUrl } : {};

  if (report.phase === "building") {
    const id = await create();
    if (id === undefined) return {};
    // A transient environment's older deployments are not made inactive by GitHub: the one replaced is, here.
    if (kept !== undefined && kept !== id) await status(kept, "inactive", {});
    await status(id, "in_progress", log);
    return { forgeDeploymentId: String(id) };
  }
  if (report.phase === "teardown") {
    const ids = kept !== undefined ? [kept] : await listed(report, environment, problems);
    for (const id of ids) await status(id, "inactive", {});
    return {};
  }
  // The build's deployment; one made now when its creation was not heard of (a restart, GitHub down then).
  const id = kept ?? (await create());
  if (id === undefined) return {};
  if (report.phase === "ok") await status(id, "success", { environment_url: preview.url, ...log });
  else await status(id, "failure", log);
  return kept === undefined ? { forgeDeploymentId: String(id) } : {};
}

/** The deployments of the preview's environment (`GET …/deployments?environment=`), the newest few. */
async function listed(report: PreviewReport, environment: string, problems: Problems): Promise<number[]> {
  const { target } = report;
  const query = new URLSearchParams({ environment, per_page: "10" });
  const answer = await forgeCall(
    target,
    "deployments of the preview",
    {
      method: "GET",
      url: `${target.apiUrl}/repos/${repoPath(target.repo)}/deployments?${query}`,
      headers: authHeaders(target),
      body: "",
    },
    problems,
  );
  const list = answerJson(answer);
  if (!Array.isArray(list)) return [];
  return list.map((item) => idOf(JSON.stringify(item))).filter((id): id is number => id !== undefined);
}

function toId(value: string | undefined): number | undefined {
  const id = Number(value);
  return value && Number.isSafeInteger(id) && id > 0 ? id : undefined;
}
