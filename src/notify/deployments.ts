/**
 * GitHub Deployments (`status.deployments: true`): one Deployment per deploy, on the pulled commit, with its
 * statuses following the commit status (in_progress, then success, failure or error).
 */
import type { OutboundAnswer, OutboundRequest } from "./outbound.ts";
import { clipDescription, type StatusState } from "./commit-status.ts";
import type { StatusTarget } from "../config/forge.ts";

const HEADERS = {
  "content-type": "application/json",
  accept: "application/vnd.github+json",
  "x-github-api-version": "2022-11-28",
};

const repoPath = (repo: string) => repo.split("/").map(encodeURIComponent).join("/");

export function createDeploymentRequest(
  target: StatusTarget,
  sha: string,
  environment: string,
  description: string,
  /** A preview's: `transient_environment: true`, `production_environment: false`. */
  kind: { transient_environment?: boolean; production_environment?: boolean } = {},
): OutboundRequest {
  return {
    url: `${target.apiUrl}/repos/${repoPath(target.repo)}/deployments`,
    headers: { ...HEADERS, authorization: `Bearer ${target.token}` },
    // The service deploys what it pulled: no merge into it, and no wait for other checks (its own status is pending).
    body: JSON.stringify({
      ref: sha,
      environment,
      description: clipDescription(description),
      auto_merge: false,
      required_contexts: [],
      ...kind,
    }),
  };
}

/** A deployment status: GitHub's states (`pending` is said `in_progress`, as the deploy is running then). */
export type DeploymentState = "queued" | "in_progress" | "success" | "failure" | "error" | "inactive";

/** What a deployment status links to: the deploy's page, the environment, and (for our own) its environment name. */
export interface DeploymentLinks {
  log_url?: string;
  environment_url?: string;
  environment?: string;
}

/** `POST /repos/{owner}/{repo}/deployments/{deployment_id}/statuses`. */
export function deploymentStatusRequest(
  target: StatusTarget,
  id: number,
  state: StatusState | DeploymentState,
  description: string,
  links: DeploymentLinks,
): OutboundRequest {
  const deploymentState = state === "pending" ? "in_progress" : state;
  return {
    url: `${target.apiUrl}/repos/${repoPath(target.repo)}/deployments/${id}/statuses`,
    headers: { ...HEADERS, authorization: `Bearer ${target.token}` },
    body: JSON.stringify({ state: deploymentState, description: clipDescription(description), ...links }),
  };
}

/** The links of a deploy's deployment statuses: its dashboard page (`adminPublicUrl`) and `environmentUrl`. */
export function deployLinks(
  config: { adminPublicUrl?: string; environmentUrl?: string },
  id: string,
): Pick<DeploymentLinks, "log_url" | "environment_url"> {
  return {
    ...(config.adminPublicUrl
      ? { log_url: `${config.adminPublicUrl.replace(/\/+$/, "")}/deploys/${encodeURIComponent(id)}` }
      : {}),
    ...(config.environmentUrl ? { environment_url: config.environmentUrl } : {}),
  };
}

export type Send = (what: string, request: OutboundRequest) => Promise<OutboundAnswer | undefined>;

/** A Deployment created for a deploy while it waited in the queue: its id, and the commit GitHub resolved its ref to. */
export interface QueuedDeployment {
  id: number;
  sha: string;
}

/**
 * A Deployment for a deploy that waits in the queue, created on the ref it will deploy (GitHub names the commit the
 * ref is at now) and marked `queued`; undefined when GitHub did not create it.
 */
export async function queuedDeployment(
  target: StatusTarget,
  ref: string,
  environment: string,
  description: string,
  links: DeploymentLinks,
  send: Send,
): Promise<QueuedDeployment | undefined> {
  const created = await send("deployment", createDeploymentRequest(target, ref, environment, description));
  const id = created?.ok ? idOf(created.body) : undefined;
  const sha = created?.ok ? shaOf(created.body) : undefined;
  if (id === undefined || sha === undefined) return undefined;
  await send("deployment queued", deploymentStatusRequest(target, id, "queued", description, links));
  return { id, sha };
}

/**
 * One deploy's Deployment: created with the first (pending) status, updated with each later one. The one `queued`
 * made while the deploy waited is that Deployment when it names the commit pulled; else it is marked `inactive`
 * and a Deployment of the pulled commit made. A deploy that ends before any pull (cancelled while it waited)
 * gives its final state to the queued one.
 */
export class GithubDeployment {
  private id: number | undefined;
  private sha: string | undefined;

  constructor(
    private readonly target: StatusTarget,
    private readonly environment: string,
    private readonly send: Send,
    private readonly environmentUrl?: string,
    private queued?: QueuedDeployment,
  ) {}

  async post(sha: string, state: StatusState, description: string, url: string | undefined): Promise<void> {
    if (state === "pending") await this.open(sha, description, url);
    else if (this.id === undefined && this.queued) this.id = this.queued.id;
    this.queued = undefined;
    if (this.id === undefined) return;
    const label = `deployment ${state === "pending" ? "in_progress" : state}`;
    await this.send(label, deploymentStatusRequest(this.target, this.id, state, description, this.links(url)));
  }

  /**
   * A failed deploy rolled back to `to`: a new Deployment for the commit live again (success), and this deploy's
   * marked `inactive`. Posted, not left to GitHub's `auto_inactive` (which its docs limit to non-production
   * environments unless a preview media type is sent).
   */
  async rolledBack(to: string, url: string | undefined): Promise<void> {
    const from = this.id;
    const description = `Live again after a rollback: ${to.slice(0, 7)}`;
    const created = await this.send(
      "deployment",
      createDeploymentRequest(this.target, to, this.environment, description),
    );
    const id = created?.ok ? idOf(created.body) : undefined;
    if (id !== undefined)
      await this.send(
        "deployment success",
        deploymentStatusRequest(this.target, id, "success", description, this.links(url)),
      );
    if (from !== undefined) await this.inactive(from, `Rolled back to ${to.slice(0, 7)}`, url);
  }

  /**
   * A rollback (`service rollback`) made this Deployment's commit live again: the Deployments of the commit it
   * rolled back from, in this environment, are marked `inactive`
   * (`GET /repos/{owner}/{repo}/deployments?sha=…&environment=…`).
   */
  async replaced(from: string, url: string | undefined): Promise<void> {
    const query = new URLSearchParams({ sha: from, environment: this.environment, per_page: "10" });
    const listed = await this.send("deployments of the commit rolled back from", {
      method: "GET",
      url: `${this.target.apiUrl}/repos/${repoPath(this.target.repo)}/deployments?${query}`,
      headers: { ...HEADERS, authorization: `Bearer ${this.target.token}` },
      body: "",
    });
    if (!listed?.ok || this.id === undefined) return;
    for (const id of idsOf(listed.body))
      if (id !== this.id) await this.inactive(id, `Rolled back to ${(this.sha ?? "").slice(0, 7)}`, url);
  }

  /** The Deployment of the pulled commit `sha`: the queued one when it names it, else a new one (the queued one inactive). */
  private async open(sha: string, description: string, url: string | undefined): Promise<void> {
    const queued = this.queued;
    this.sha = sha;
    if (queued?.sha === sha) {
      this.id = queued.id;
      return;
    }
    const created = await this.send(
      "deployment",
      createDeploymentRequest(this.target, sha, this.environment, description),
    );
    this.id = created?.ok ? idOf(created.body) : undefined;
    if (queued) await this.inactive(queued.id, `Superseded: deploying ${sha.slice(0, 7)}`, url);
  }

  private inactive(id: number, description: string, url: string | undefined) {
    return this.send(
      "deployment inactive",
      deploymentStatusRequest(this.target, id, "inactive", description, this.links(url)),
    );
  }

  private links(url: string | undefined): DeploymentLinks {
    return {
      environment: this.environment,
      ...(url ? { log_url: url } : {}),
      ...(this.environmentUrl ? { environment_url: this.environmentUrl } : {}),
    };
  }
}

/** The id of a created deployment (GitHub's, GitLab's), from its answer. */
export function idOf(body: string | undefined): number | undefined {
  try {
    const id = (JSON.parse(body ?? "") as { id?: unknown }).id;
    return typeof id === "number" && Number.isSafeInteger(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The commit a created deployment names (GitHub resolves the ref it was given). */
function shaOf(body: string | undefined): string | undefined {
  try {
    const sha = (JSON.parse(body ?? "") as { sha?: unknown }).sha;
    return typeof sha === "string" && /^[0-9a-f]{40}$/.test(sha) ? sha : undefined;
  } catch {
    return undefined;
  }
}

/** The ids of a list of deployments (a few: the list asked for is bounded). */
function idsOf(body: string | undefined): number[] {
  try {
    const list = JSON.parse(body ?? "") as unknown;
    if (!Array.isArray(list)) return [];
    return list
      .map((item) => (item && typeof item === "object" ? (item as { id?: unknown }).id : undefined))
      .filter((id): id is number => typeof id === "number" && Number.isSafeInteger(id));
  } catch {
    return [];
  }
}
