/**
 * What a forge says of a login's permission on the repository, as GitHub's associations (docs/previews.md
 * "Trust"): GitHub `GET /repos/{repo}/collaborators/{login}/permission`, Gitea/Forgejo the same path of its API.
 * Bounded (one answer of 64 KiB, 10 seconds); a failure is undefined (nothing decided), never thrown.
 */
import type { StatusTarget } from "../config/forge.ts";

const MAX_BYTES = 64 * 1024;
const TIMEOUT_MS = 10_000;
const LOGIN = /^[A-Za-z0-9_.[\]-]{1,100}$/;

/** OWNER, COLLABORATOR (write or more), NONE; undefined when the forge could not be asked. */
export async function associationOf(target: StatusTarget, login: string): Promise<string | undefined> {
  if (!LOGIN.test(login) || (target.provider !== "github" && target.provider !== "gitea")) return undefined;
  const repo = target.repo.split("/").map(encodeURIComponent).join("/");
  const url = `${target.apiUrl.replace(/\/+$/, "")}/repos/${repo}/collaborators/${encodeURIComponent(login)}/permission`;
  const headers: Record<string, string> =
    target.provider === "github"
      ? {
          accept: "application/vnd.github+json",
          authorization: `Bearer ${target.token}`,
          "x-github-api-version": "2022-11-28",
        }
      : { accept: "application/json", authorization: `token ${target.token}` };
  try {
    const response = await fetch(url, {
      headers: { "user-agent": "service-deploy-webhook", ...headers },
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    // Not a collaborator: GitHub and Gitea answer 404 (GitHub also "none").
    if (response.status === 404) return "NONE";
    if (!response.ok) return undefined;
    const text = await response.text();
    if (text.length > MAX_BYTES) return undefined;
    const permission = (JSON.parse(text) as { permission?: unknown }).permission;
    if (permission === "owner") return "OWNER";
    if (permission === "admin" || permission === "write" || permission === "maintain") return "COLLABORATOR";
    return typeof permission === "string" ? "NONE" : undefined;
  } catch {
    return undefined;
  }
}
