/**
 * GitLab environments (`status.deployments: true` on GitLab): each deploy is recorded as an external deployment of
 * the environment, `POST /projects/:id/deployments` with `status: running` when the commit is known, then
 * `PUT /projects/:id/deployments/:deployment_id` with `success`, `failed` or `canceled`.
 */
import type { OutboundRequest } from "./outbound.ts";
import type { StatusState } from "./commit-status.ts";
import type { StatusTarget } from "../config/forge.ts";
import { idOf, type Send } from "./deployments.ts";

const headers = (target: StatusTarget) => ({
  "content-type": "application/json",
  accept: "application/json",
  "private-token": target.token,
});

/** A path (group/sub/name) is one URL-encoded id; a numeric id is used as it is. */
const project = (target: StatusTarget) => `${target.apiUrl}/projects/${encodeURIComponent(target.repo)}/deployments`;

export function createGitlabDeployment(
  target: StatusTarget,
  deployed: { environment: string; sha: string; ref: string; tag: boolean },
): OutboundRequest {
  return { url: project(target), headers: headers(target), body: JSON.stringify({ ...deployed, status: "running" }) };
}

export function updateGitlabDeployment(target: StatusTarget, id: number, state: StatusState): OutboundRequest {
  const status = { pending: "running", success: "success", failure: "failed", error: "canceled" }[state];
  return { method: "PUT", url: `${project(target)}/${id}`, headers: headers(target), body: JSON.stringify({ status }) };
}

/** One deploy's GitLab deployment: created with the first (pending) status, updated with the final one. */
export class GitlabDeployment {
  private id: number | undefined;

  constructor(
    private readonly target: StatusTarget,
    private readonly environment: string,
    /** The branch or tag deployed, and whether it is a tag. */
    private readonly ref: () => Promise<{ ref: string; tag: boolean }>,
    private readonly send: Send,
  ) {}

  async post(sha: string, state: StatusState): Promise<void> {
    if (state === "pending") {
      const { ref, tag } = await this.ref();
      const created = await this.send(
        "deployment running",
        createGitlabDeployment(this.target, { environment: this.environment, sha, ref, tag }),
      );
      this.id = created?.ok ? idOf(created.body) : undefined;
      return;
    }
    if (this.id === undefined) return;
    const said = { success: "success", failure: "failed", error: "canceled" }[state];
    await this.send(`deployment ${said}`, updateGitlabDeployment(this.target, this.id, state));
  }
}
