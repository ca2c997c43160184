/** Commit statuses per forge: the documented request of each API (the forge and repository: config/forge.ts). */
import type { OutboundRequest } from "./outbound.ts";
import { basicCredential } from "../config/notify.ts";
import type { StatusTarget } from "../config/forge.ts";

/** The state of a deploy as a commit status; each forge names it its own way. */
export type StatusState = "pending" | "success" | "failure" | "error";

/** `{id}`, `{app}`, `{commit}` filled in (URL-encoded). */
export function fillTemplate(template: string, values: { id: string; app?: string; commit: string }): string {
  return template.replace(/\{(id|app|commit)\}/g, (_, name: "id" | "app" | "commit") =>
    encodeURIComponent(values[name] ?? ""),
  );
}

/** GitHub and Gitea limit the description to 140 characters; the others are shown cut even shorter. */
export function clipDescription(text: string): string {
  return text.length < 140 ? text : `${text.slice(0, 138)}…`;
}

const json = { "content-type": "application/json", accept: "application/json" };

/** The documented call of each forge's commit-status API. */
export function statusRequest(
  target: StatusTarget,
  sha: string,
  state: StatusState,
  description: string,
  url: string | undefined,
): OutboundRequest {
  const { apiUrl, repo, token, context } = target;
  const desc = clipDescription(description);
  const path = (value: string) => value.split("/").map(encodeURIComponent).join("/");
  switch (target.provider) {
    case "github":
      return {
        url: `${apiUrl}/repos/${path(repo)}/statuses/${sha}`,
        headers: {
          ...json,
          accept: "application/vnd.github+json",
          authorization: `Bearer ${token}`,
          "x-github-api-version": "2022-11-28",
        },
        body: JSON.stringify({ state, description: desc, context, ...(url ? { target_url: url } : {}) }),
      };
    case "gitea":
      return {
        url: `${apiUrl}/repos/${path(repo)}/statuses/${sha}`,
        headers: { ...json, authorization: `token ${token}` },
        body: JSON.stringify({ state, description: desc, context, ...(url ? { target_url: url } : {}) }),
      };
    case "gitlab": {
      const gitlabState = { pending: "running", success: "success", failure: "failed", error: "canceled" }[state];
      return {
        // A path (group/sub/name) is one URL-encoded id; a numeric id is used as it is.
        url: `${apiUrl}/projects/${encodeURIComponent(repo)}/statuses/${sha}`,
        headers: { ...json, "private-token": token },
        body: JSON.stringify({
          state: gitlabState,
          name: context,
          description: desc,
          ...(url ? { target_url: url } : {}),
        }),
      };
    }
    case "bitbucket": {
      const bitbucketState = { pending: "INPROGRESS", success: "SUCCESSFUL", failure: "FAILED", error: "STOPPED" }[
        state
      ];
      // An app password is written `username:app-password` (Basic); an access token alone is a Bearer token.
      const authorization = token.includes(":") ? `Basic ${basicCredential(token)}` : `Bearer ${token}`;
      return {
        url: `${apiUrl}/repositories/${path(repo)}/commit/${sha}/statuses/build`,
        headers: { ...json, authorization },
        // Bitbucket requires `url`; without a targetUrl the commit's own page stands in. Keys are at most 40 characters.
        body: JSON.stringify({
          key: context.slice(0, 40),
          state: bitbucketState,
          name: context,
          url: url ?? `https://bitbucket.org/${repo}/commits/${sha}`,
          description: desc,
        }),
      };
    }
  }
}
