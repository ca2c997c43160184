/**
 * What previews ask of the app's forge, through its `status` settings (config/forge.ts `statusTarget`): who a
 * login is to the repository, whether a pull request is still open. Without a usable `status`, nothing is asked.
 */
import type { ResolvedApp } from "../config/apps.ts";
import { type StatusTarget, statusTarget } from "../config/forge.ts";
import { originUrl } from "../system/git.ts";
import { associationOf } from "./permission.ts";
import { gitlabAccessLevel } from "./authors-gitlab.ts";
import type { PullRequestEvent } from "./types.ts";

/** The app's forge target, when its `status` makes a usable one. */
export async function targetOf(
  app: ResolvedApp,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<StatusTarget | undefined> {
  if (!app.status) return undefined;
  const target = statusTarget(app.status, await originUrl(app.repoPath, env), app.name, cwd, env);
  return "problem" in target ? undefined : target;
}

/**
 * A login's association as the forge says it, or undefined when there is no forge to ask. GitLab names people by
 * id: the event's author and sender are asked by theirs (authors-gitlab.ts), anyone else is not decided.
 */
export async function forgeAsk(
  app: ResolvedApp,
  cwd: string,
  env: NodeJS.ProcessEnv,
  event: Pick<PullRequestEvent, "author" | "authorId" | "sender" | "senderId" | "projectId">,
): Promise<((login: string) => Promise<string | undefined>) | undefined> {
  const target = await targetOf(app, cwd, env);
  if (!target) return undefined;
  if (target.provider !== "gitlab") return (login) => associationOf(target, login);
  const ids = new Map([
    [event.author, event.authorId],
    [event.sender, event.senderId],
  ]);
  return async (login) => {
    const id = ids.get(login);
    if (id === undefined || event.projectId === undefined) return undefined;
    const level = await gitlabAccessLevel(target, event.projectId, id);
    return "association" in level ? level.association : undefined;
  };
}

/** Whether pull request `number` is open (GitHub and Gitea: `GET /repos/{repo}/pulls/{n}`); undefined: unknown. */
export async function pullOpen(
  app: ResolvedApp,
  cwd: string,
  env: NodeJS.ProcessEnv,
  number: number,
): Promise<boolean | undefined> {
  const target = await targetOf(app, cwd, env);
  if (!target || (target.provider !== "github" && target.provider !== "gitea")) return undefined;
  const repo = target.repo.split("/").map(encodeURIComponent).join("/");
  try {
    const response = await fetch(`${target.apiUrl.replace(/\/+$/, "")}/repos/${repo}/pulls/${number}`, {
      headers: {
        "user-agent": "service-deploy-webhook",
        ...(target.provider === "github"
          ? {
              accept: "application/vnd.github+json",
              authorization: `Bearer ${target.token}`,
              "x-github-api-version": "2022-11-28",
            }
          : { accept: "application/json", authorization: `token ${target.token}` }),
      },
      redirect: "manual",
      signal: AbortSignal.timeout(10_000),
    });
    if (response.status === 404) return false;
    if (!response.ok) return undefined;
    const state = ((await response.json()) as { state?: unknown }).state;
    return state === "open" ? true : state === "closed" ? false : undefined;
  } catch {
    return undefined;
  }
}
