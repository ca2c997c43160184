/**
 * What a forge says of a login's permission on the repository, as GitHub's associations (docs/previews.md
 * "Trust"): GitHub `GET /repos/{repo}/collaborators/{login}/permission`, Gitea/Forgejo the same path of its API.
 * Asked once, bounded like every forge call of the previews (forge-call.ts); a failure is undefined (nothing
 * decided), never thrown.
 */
import type { StatusTarget } from "../config/forge.ts";
import { answerJson, repoQuestion } from "./forge-call.ts";

const LOGIN = /^[A-Za-z0-9_.[\]-]{1,100}$/;

/** OWNER, COLLABORATOR (write or more), NONE; undefined when the forge could not be asked. */
export async function associationOf(target: StatusTarget, login: string): Promise<string | undefined> {
  if (!LOGIN.test(login) || (target.provider !== "github" && target.provider !== "gitea")) return undefined;
  const answer = await repoQuestion(target, `/collaborators/${encodeURIComponent(login)}/permission`);
  // Not a collaborator: GitHub and Gitea answer 404 (GitHub also "none").
  if (answer.status === 404) return "NONE";
  if (!answer.ok) return undefined;
  const permission = (answerJson(answer) as { permission?: unknown } | undefined)?.permission;
  if (permission === "owner") return "OWNER";
  if (permission === "admin" || permission === "write" || permission === "maintain") return "COLLABORATOR";
  return typeof permission === "string" ? "NONE" : undefined;
}
