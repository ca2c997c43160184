/**
 * A preview on GitLab (docs/previews.md "GitLab"): the environment `review/pr-<iid>` with the preview's URL, a
 * deployment of it per build through the deployments API (`running`, then `success` or `failed`), the environment
 * stopped on teardown; and the commit status `preview` on the head. The deployments' requests are the house's own
 * (notify/gitlab-deployments.ts).
 */
import type { StatusTarget } from "../config/forge.ts";
import { idOf } from "../notify/deployments.ts";
import { createGitlabDeployment, updateGitlabDeployment } from "../notify/gitlab-deployments.ts";
import { answerJson, forgeCall, type Problems } from "./forge-call.ts";
import type { PreviewReport, PreviewReported } from "./report-types.ts";
import { reportStatus } from "./report-status.ts";
import { environmentOf } from "./report-words.ts";

const headers = (target: StatusTarget) => ({
  "content-type": "application/json",
  accept: "application/json",
  "private-token": target.token,
});

const projectUrl = (target: StatusTarget) => `${target.apiUrl}/projects/${encodeURIComponent(target.repo)}`;

export async function reportGitlab(report: PreviewReport, problems: Problems): Promise<PreviewReported["keep"]> {
  const { target, preview } = report;
  const name = environmentOf("review", report);
  const kept = Number(preview.forgeDeploymentId);
  const known = Number.isSafeInteger(kept) && kept > 0 ? kept : undefined;
  const create = async () => {
    const request = createGitlabDeployment(target, {
      environment: name,
      sha: preview.head,
      ref: preview.branch,
      tag: false,
    });
    return idOf((await forgeCall(target, "deployment running", request, problems))?.body);
  };

  if (report.phase === "teardown") {
    const environment = await findEnvironment(target, name, problems);
    if (environment)
      await forgeCall(
        target,
        `stop of environment ${name}`,
        { url: `${projectUrl(target)}/environments/${environment.id}/stop`, headers: headers(target), body: "{}" },
        problems,
      );
    return {};
  }
  let keep: PreviewReported["keep"] = {};
  if (report.phase === "building") {
    await environmentWithUrl(target, name, preview.url, problems);
    const id = await create();
    if (id !== undefined) keep = { forgeDeploymentId: String(id) };
  } else {
    const id = known ?? (await create());
    if (id !== undefined) {
      await forgeCall(
        target,
        `deployment ${report.phase === "ok" ? "success" : "failed"}`,
        updateGitlabDeployment(target, id, report.phase === "ok" ? "success" : "failure"),
        problems,
      );
      if (known === undefined) keep = { forgeDeploymentId: String(id) };
    }
  }
  await reportStatus(report, problems);
  return keep;
}

/** The environment named `name` (`GET /projects/:id/environments?name=`): undefined when there is none, null when unread. */
async function findEnvironment(
  target: StatusTarget,
  name: string,
  problems: Problems,
): Promise<{ id: number; external_url?: unknown } | undefined | null> {
  const answer = await forgeCall(
    target,
    `environment ${name}`,
    {
      method: "GET",
      url: `${projectUrl(target)}/environments?${new URLSearchParams({ name })}`,
      headers: headers(target),
      body: "",
    },
    problems,
  );
  const list = answerJson(answer);
  if (!Array.isArray(list)) return null;
  const found = list.find((item) => item && typeof item === "object" && (item as { name?: unknown }).name === name);
  const id = found ? idOf(JSON.stringify(found)) : undefined;
  return id === undefined ? undefined : { id, external_url: (found as { external_url?: unknown }).external_url };
}

/** The environment with the preview's URL: created, or its URL set when it names another. */
async function environmentWithUrl(target: StatusTarget, name: string, url: string, problems: Problems): Promise<void> {
  const environment = await findEnvironment(target, name, problems);
  // Unread: not made again blindly (GitLab refuses a second environment of a name).
  if (environment === null) return;
  if (!environment) {
    const body = JSON.stringify({ name, external_url: url, tier: "development" });
    await forgeCall(
      target,
      `environment ${name}`,
      { url: `${projectUrl(target)}/environments`, headers: headers(target), body },
      problems,
    );
  } else if (environment.external_url !== url) {
    await forgeCall(
      target,
      `environment ${name}`,
      {
        method: "PUT",
        url: `${projectUrl(target)}/environments/${environment.id}`,
        headers: headers(target),
        body: JSON.stringify({ external_url: url }),
      },
      problems,
    );
  }
}
