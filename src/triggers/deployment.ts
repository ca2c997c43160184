/**
 * A GitHub `deployment` event (with `deploymentEvents`): whether it deploys, and what. It deploys exactly the
 * deployment's commit, for the app's `environment`, when its ref is the app's branch or a ref `deployRefs` allows
 * and the commit is on that ref's tip at the remote: whoever may create a deployment through the API must not
 * ship a branch nobody reviewed. Anything else is answered `[skipped] …` and deploys nothing.
 */
import type { ResolvedApp } from "../config/apps.ts";
import { refAllowed } from "./refs.ts";
import { currentBranch, defaultRemote, gitQuery, isAncestor } from "../system/git.ts";
import { cleanActor } from "../system/actor.ts";
import type { DeploymentInfo, RollbackTarget } from "../types.ts";
import type { TriggerSkip } from "./types.ts";

/** What a deployment event deploys: the commit (a target like `--ref`'s), the deployment, who created it. */
export interface DeploymentDeploy {
  target: RollbackTarget & { ref: string };
  deployment: DeploymentInfo;
  actor: string | undefined;
}

type Payload = Record<string, unknown>;
const FULL_COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
const MAX_REF_CHARS = 250;

/** Whether a delivery is a deployment event this app decides itself (instead of its `events` filter). */
export const isDeploymentEvent = (app: Pick<ResolvedApp, "deploymentEvents">, event: string | null) =>
  app.deploymentEvents === true && event?.toLowerCase() === "deployment";

/** Refused: counted like every skipped delivery (`service_skipped_pushes_total{reason="environment"}`). */
const skip = (text: string): { skip: TriggerSkip } => ({ skip: { reason: "environment", text } });

/** The deployment event's decision: a deploy, or why not. */
export async function deploymentTrigger(
  app: Pick<ResolvedApp, "repoPath" | "branch" | "deployRefs" | "environment" | "deploymentCreators">,
  payload: Payload | undefined,
  env: NodeJS.ProcessEnv,
): Promise<DeploymentDeploy | { skip: TriggerSkip }> {
  const action = payload?.action;
  const d = payload?.deployment as Payload | undefined;
  const id = d?.id;
  if (!d || typeof id !== "number" || !Number.isSafeInteger(id) || id <= 0)
    return skip("deployment event without a deployment id");
  // GitHub sends `created` only; anything else is not a request to deploy.
  if (action !== undefined && action !== "created") return skip(`deployment ${id}: action ${String(action)}`);
  const environment = typeof d.environment === "string" ? d.environment : "";
  if (environment !== app.environment) {
    // Said back in the answer: printable and short, whatever the payload holds.
    const named = environment.replace(/[^\x20-\x7e]/g, "?").slice(0, 100) || "(none)";
    return skip(`deployment ${id} is for environment ${named}; this app deploys ${app.environment}`);
  }
  const creator = cleanActor((d.creator as Payload | undefined)?.login) ?? undefined;
  if (app.deploymentCreators && !(creator && app.deploymentCreators.includes(creator)))
    return skip(
      `deployment ${id} was created by ${creator ?? "(nobody named)"}; only ${app.deploymentCreators.join(", ")} may deploy`,
    );
  const sha = typeof d.sha === "string" ? d.sha.toLowerCase() : "";
  const ref = typeof d.ref === "string" ? d.ref.trim() : "";
  if (!FULL_COMMIT.test(sha)) return skip(`deployment ${id} names no commit`);
  if (!ref || ref.length > MAX_REF_CHARS || ref.startsWith("-") || /[\u0000-\u0020\u007f~^:?*[\\]/.test(ref))
    return skip(`deployment ${id} names no ref it could be checked against`);

  const branch = app.branch ?? (await currentBranch(app.repoPath, env)) ?? undefined;
  const candidates = ref.startsWith("refs/") ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`];
  // The refs the app may deploy: its branch, or what deployRefs allows. Hook: a tag that `tags` allows (release
  // tags) is to be accepted here too, beside deployRefs.
  const allowed = candidates.filter(
    (full) => (branch !== undefined && full === `refs/heads/${branch}`) || refAllowed(app.deployRefs ?? [], ref, full),
  );
  if (allowed.length === 0)
    return skip(`deployment ${id}: ref ${ref} is not the app's branch (${branch ?? "none"}) nor in deployRefs`);

  // A git that cannot even start (a removed repoPath) refuses the deployment; it never fails the request.
  const contained = await onRemoteTip(app.repoPath, allowed, sha, id, env).catch(
    (error: Error) => `${allowed[0]} could not be checked: ${error.message}`,
  );
  if (contained !== true) return skip(`deployment ${id}: ${contained}`);
  return {
    target: { commit: sha, deployId: null, ref },
    deployment: { id, environment, task: typeof d.task === "string" ? d.task.slice(0, 100) : "deploy" },
    actor: creator,
  };
}

/**
 * Whether `sha` is the tip of one of `refs` at the remote or an ancestor of it. The ref is fetched into a private
 * ref of its own (no FETCH_HEAD, no remote-tracking ref: a deploy pulling meanwhile sees nothing move), removed after.
 */
async function onRemoteTip(
  repoPath: string,
  refs: string[],
  sha: string,
  id: number,
  env: NodeJS.ProcessEnv,
): Promise<true | string> {
  const remote = await defaultRemote(repoPath, env);
  if (!remote) return `the repository ${repoPath} has no remote to check ${refs[0]} on`;
  const local = `refs/service/deployments/${id}`;
  try {
    for (const full of refs) {
      const fetched = await gitQuery(
        repoPath,
        ["fetch", "--quiet", "--no-write-fetch-head", "--no-tags", "--refmap=", remote, `+${full}:${local}`],
        env,
      );
      if (fetched.code !== 0) continue;
      if (await isAncestor(repoPath, sha, local, env)) return true;
      return `commit ${sha.slice(0, 12)} is not on ${full} at ${remote}`;
    }
    return `${refs.join(" or ")} not found at ${remote}`;
  } finally {
    await gitQuery(repoPath, ["update-ref", "-d", local], env);
  }
}
