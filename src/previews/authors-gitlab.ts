/**
 * A GitLab author's standing (docs/previews.md "GitLab"): GitLab sends no role with a merge request, so the access
 * level of the user in the project is asked of the API, `GET /projects/:id/members/all/:user_id` (inherited members
 * included), and kept a minute. Developer (30) and above counts as MEMBER; Maintainer (40) and above as OWNER.
 */
import type { StatusTarget } from "../config/forge.ts";
import { authHeaders } from "../gate/forges.ts";
import { answerJson, forgeSend, problemOf } from "./forge-call.ts";

export const GITLAB_DEVELOPER = 30;
export const GITLAB_MAINTAINER = 40;
const CACHE_MS = 60_000;
const CACHE_MAX = 1000;

export type GitlabStanding =
  | { association: "OWNER" | "MEMBER" | "NONE"; accessLevel: number }
  /** The API did not say (a refusal, no answer): nothing decidable. */
  | { problem: string };

const cache = new Map<string, { at: number; standing: GitlabStanding }>();

/** The association of `userId` in `projectId`, as `authors` entries name them. */
export function associationOf(accessLevel: number): "OWNER" | "MEMBER" | "NONE" {
  return accessLevel >= GITLAB_MAINTAINER ? "OWNER" : accessLevel >= GITLAB_DEVELOPER ? "MEMBER" : "NONE";
}

/** The user's access level in the project (0 when not a member), kept a minute; a problem is not kept. */
export async function gitlabAccessLevel(
  target: StatusTarget,
  projectId: number,
  userId: number,
  now = Date.now(),
): Promise<GitlabStanding> {
  if (!Number.isSafeInteger(projectId) || !Number.isSafeInteger(userId) || projectId <= 0 || userId <= 0)
    return { problem: "gitlab: the project or the user has no id" };
  const key = `${target.apiUrl}\n${target.token}\n${projectId}\n${userId}`;
  const kept = cache.get(key);
  if (kept && now - kept.at < CACHE_MS) return kept.standing;
  const answer = await forgeSend(target, {
    method: "GET",
    url: `${target.apiUrl}/projects/${projectId}/members/all/${userId}`,
    headers: authHeaders(target),
    body: "",
  });
  let standing: GitlabStanding;
  if (answer.status === 404) standing = { association: "NONE", accessLevel: 0 };
  else if (!answer.ok) return { problem: problemOf(target, `member ${userId} of project ${projectId}`, answer) };
  else {
    const level = (answerJson(answer) as { access_level?: unknown } | undefined)?.access_level;
    if (typeof level !== "number" || !Number.isInteger(level))
      return { problem: `GitLab member ${userId} of project ${projectId}: the answer names no access level` };
    standing = { association: associationOf(level), accessLevel: level };
  }
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(key, { at: now, standing });
  return standing;
}
