/** GitHub `deployment` deliveries as GitHub sends them, for the tests of deployment events. */
import { post, SECRET, type RunningServer } from "./helpers.ts";
import { OWNER_REPO } from "./deployments-api.ts";
import { githubHeaders, hmacHex } from "./webhook-fixtures.ts";

export const BOT = "github-actions[bot]";
export const ADMIN = "https://deploy.example.com/admin";
export const SITE = "https://web.example.com";

/** A `deployment` delivery as GitHub sends it (octokit's `DeploymentCreatedEvent`, trimmed of URLs). */
export function deploymentEvent(
  id: number,
  sha: string,
  options: { ref?: string; environment?: string; creator?: string } = {},
): Record<string, unknown> {
  const creator = { login: options.creator ?? BOT, id: 41898282, type: "Bot" };
  return {
    action: "created",
    deployment: {
      url: `https://api.github.com/repos/${OWNER_REPO}/deployments/${id}`,
      id,
      node_id: "DE_kwDOAAAAAc4AAAAB",
      sha,
      ref: options.ref ?? "main",
      task: "deploy",
      payload: {},
      original_environment: options.environment ?? "production",
      environment: options.environment ?? "production",
      description: null,
      creator,
      created_at: "2026-05-04T08:15:31Z",
      updated_at: "2026-05-04T08:15:31Z",
      transient_environment: false,
      production_environment: true,
    },
    workflow: null,
    workflow_run: null,
    repository: { id: 186853002, name: "web", full_name: OWNER_REPO, owner: { login: "acme" } },
    sender: creator,
  };
}

/** POSTs `body` as GitHub delivers a `deployment` event: signed with the webhook secret. */
export function deliver(server: RunningServer, body: Record<string, unknown>, query = ""): Promise<Response> {
  const text = JSON.stringify(body);
  return post(`${server.url}/hook${query}`, {
    headers: {
      ...githubHeaders(),
      "x-github-event": "deployment",
      "x-hub-signature-256": `sha256=${hmacHex(SECRET, text)}`,
    },
    body: text,
  });
}
