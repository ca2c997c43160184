/**
 * What previews ask of the app's forge, through its `status` settings (config/forge.ts `statusTarget`): who a
 * login is to the repository, whether a pull request is still open. Without a usable `status`, nothing is asked.
 */
import type { ResolvedApp } from "../config/apps.ts";
import { type StatusTarget, statusTarget } from "../config/forge.ts";
import { originUrl } from "../system/git.ts";
import { associationOf } from "./permission.ts";
import { gitlabAccessLevel } from "./authors-gitlab.ts";
import { answerJson, repoQuestion } from "./forge-call.ts";
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
 * A login's association as the forge says it; undefined when there is no forge to ask. The forge's target (a
 * `git remote get-url` first) is found at the first question only: a delivery whose `authors` decide without the
 * forge asks nothing. GitLab names people by id: the event's author and sender are asked by theirs
 * (authors-gitlab.ts), anyone else is not decided.
 */
export function forgeAsk(
  app: ResolvedApp,
  cwd: string,
  env: NodeJS.ProcessEnv,
  event: Pick<PullRequestEvent, "author" | "authorId" | "sender" | "senderId" | "projectId">,
): (login: string) => Promise<string | undefined> {
  let found: Promise<StatusTarget | undefined> | undefined;
  const ids = new Map([
    [event.author, event.authorId],
    [event.sender, event.senderId],
  ]);
  return async (login) => {
    const target = await (found ??= targetOf(app, cwd, env));
    if (!target) return undefined;
    if (target.provider !== "gitlab") return associationOf(target, login);
    const id = ids.get(login);
    if (id === undefined || event.projectId === undefined) return undefined;
    const level = await gitlabAccessLevel(target, event.projectId, id);
    return "association" in level ? level.association : undefined;
  };
}

/** A pull request's answer holds its description (64 K characters at most) and two repositories: read up to 4 MiB. */
const PULL_MAX_BYTES = 4 * 1024 * 1024;

/** Whether pull request `number` is open (GitHub and Gitea: `GET /repos/{repo}/pulls/{n}`); undefined: unknown. */
export async function pullOpen(target: StatusTarget, number: number): Promise<boolean | undefined> {
  if (target.provider !== "github" && target.provider !== "gitea") return undefined;
  const answer = await repoQuestion(target, `/pulls/${number}`, PULL_MAX_BYTES);
  if (answer.status === 404) return false;
  if (!answer.ok) return undefined;
  const state = (answerJson(answer) as { state?: unknown } | undefined)?.state;
  return state === "open" ? true : state === "closed" ? false : undefined;
}
