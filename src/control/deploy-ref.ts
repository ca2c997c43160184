/**
 * What `service deploy --ref <ref>` and the admin API's `{"ref": …}` deploy (docs/deploy-control.md "Deploy a
 * ref"): a deploy id (a retry: the commit that deploy tried), a tag or a branch as the remote has it now, or a
 * commit. Resolved before anything is queued, without touching the repository (a fetch there could race a
 * running deploy's pull); the deploy fetches the commit if it is not in the repository yet.
 */
import type { ResolvedApp } from "../config/apps.ts";
import { type HistoryEntry, readDeployRecord } from "../history/read.ts";
import { defaultRemote, fullRefName, gitQuery, resolveCommit } from "../system/git.ts";
import type { RollbackTarget } from "../types.ts";
import { appDeploy } from "./rollback.ts";
import { refAllowed } from "../triggers/refs.ts";

export { refAllowed };

/** A ref that cannot be deployed: it names nothing, or `deployRefs` does not allow it. Nothing was queued. */
export class DeployRefError extends Error {
  override name = "DeployRefError";
  constructor(
    message: string,
    /** True when `deployRefs` refused it (the API answers 403), false when it names nothing (400). */
    readonly notAllowed = false,
  ) {
    super(message);
  }
}

/** Longest ref accepted: a branch or tag name, a commit, a deploy id. */
const MAX_REF_CHARS = 250;

/** The commit a deploy tried (its pull's or reset's), whatever it ended as: what a retry deploys again. */
function commitTriedBy(jsonPath: string): string | null {
  const after = (readDeployRecord(jsonPath)?.result as { pull?: { after?: unknown } } | undefined)?.pull?.after;
  return typeof after === "string" && /^[0-9a-f]{40,64}$/.test(after) ? after : null;
}

/**
 * The commits the remote has for `ref` as a branch or a tag (a tag's commit, not the tag object), and every tip it
 * has (to match a commit hash the repository has not fetched yet). Throws with git's last line when it cannot be asked.
 */
async function remoteRefs(
  repoPath: string,
  remote: string,
  ref: string,
  env: NodeJS.ProcessEnv,
): Promise<{ named: Resolved | undefined; tips: string[] }> {
  // Branches and tags only (a forge's pull request refs can be thousands), unless a full ref is named.
  const args = ref.startsWith("refs/") ? ["--", remote, ref, `${ref}^{}`] : ["--heads", "--tags", "--", remote];
  const { code, stdout } = await gitQuery(repoPath, ["ls-remote", ...args], env);
  if (code !== 0) throw new Error(`git ls-remote ${remote} failed (exit code ${code})`);
  const refs = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const [commit, name] = line.split("\t");
    if (commit && name && /^[0-9a-f]{40,64}$/.test(commit)) refs.set(name, commit);
  }
  const full = ref.startsWith("refs/") ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`];
  // An annotated tag's own object is not a commit: its peeled entry (`^{}`) is.
  const name = full.find((name) => refs.has(name));
  const named = name ? { commit: (refs.get(`${name}^{}`) ?? refs.get(name))!, full: name } : undefined;
  return { named, tips: [...refs.values()] };
}

/**
 * The commit `ref` names for `app`, with the ref as named. Throws DeployRefError (nothing queued) when it names
 * nothing, or when the app's `deployRefs` does not list it (a deploy id is always allowed: it was deployed before).
 * `resolved`: the deploy `ref` names when the caller looked it up (the admin API, among its token's apps; null: none).
 */
export async function deployRefTarget(
  cwd: string,
  app: Pick<ResolvedApp, "repoPath" | "name" | "deployRefs">,
  given: string,
  env: NodeJS.ProcessEnv,
  resolved?: HistoryEntry | null,
): Promise<RollbackTarget & { ref: string }> {
  const ref = given.trim();
  if (!ref || ref.length > MAX_REF_CHARS || ref.startsWith("-") || /[\u0000-\u0020\u007f]/.test(ref))
    throw new DeployRefError(`"${ref.slice(0, 80)}" is not a ref: give a tag, a branch, a commit or a deploy id`);
  const deploy = appDeploy(cwd, ref, app.name, DeployRefError, resolved);
  if (deploy) {
    const commit = commitTriedBy(deploy.jsonPath);
    if (!commit) throw new DeployRefError(`deploy ${deploy.id} tried no commit to deploy again (its pull failed)`);
    return { commit, deployId: deploy.id, ref };
  }
  const { repoPath } = app;
  const found = await resolveRef(repoPath, ref, env);
  // Matched once the kind is known: `refs/tags/v*` must not let a branch named `vevil` through.
  if (app.deployRefs && !refAllowed(app.deployRefs, ref, found.full))
    throw new DeployRefError(
      `"${ref}" is not in deployRefs (${app.deployRefs.join(", ")}): only those refs, or a deploy id, may be deployed`,
      true,
    );
  const tag = found.full?.startsWith("refs/tags/") ? found.full.slice(10) : undefined;
  return { commit: found.commit, deployId: null, ref, ...(tag ? { tag } : {}) };
}

/**
 * What a deploy that names no ref deploys for an app with `tags`: the highest matching tag on the remote
 * (triggers/tags.ts), checked like a pushed one; undefined without `tags` (a pull). Throws DeployRefError when no
 * tag may deploy, or the remote cannot be asked.
 */
export async function tagsTarget(
  cwd: string,
  app: Pick<ResolvedApp, "repoPath" | "name" | "branch" | "tags">,
  env: NodeJS.ProcessEnv,
): Promise<(RollbackTarget & { ref: string }) | undefined> {
  if (!app.tags) return undefined;
  const { tagTrigger } = await import("../triggers/tags.ts");
  const decision = await tagTrigger(cwd, { ...app, tags: app.tags }, undefined, env).catch((error: Error) => {
    // The cause says the remote could not be asked: a catch-up tries again, unlike for a tag that may not deploy.
    throw Object.assign(new DeployRefError(`tags ${app.tags}: ${error.message}`), { cause: error });
  });
  if ("skip" in decision) throw new DeployRefError(`tags ${app.tags}: ${decision.skip.text}`);
  return decision.target;
}

/** A ref resolved: its commit, and the full ref of the branch or tag it named (none for a commit). */
interface Resolved {
  commit: string;
  full?: string;
}

/** What `ref` names: a commit of the repository, a branch or tag as the remote has it now, else as the repository has it. */
async function resolveRef(repoPath: string, ref: string, env: NodeJS.ProcessEnv): Promise<Resolved> {
  const hex = /^[0-9a-f]{4,64}$/i.test(ref);
  // A commit the repository has is that commit, whatever the remote says.
  const local = hex ? await resolveCommit(repoPath, ref, env) : null;
  if (local) return { commit: local, full: await fullRefName(repoPath, ref, env) };
  const remote = await defaultRemote(repoPath, env);
  let problem = "";
  if (remote) {
    try {
      const { named, tips } = await remoteRefs(repoPath, remote, ref, env);
      // A branch or a tag as the remote has it now: the newest, not the last one fetched.
      if (named) return named;
      const tip = hex ? tips.find((commit) => commit.startsWith(ref.toLowerCase())) : undefined;
      if (tip) return { commit: tip };
    } catch (error) {
      problem = ` (the remote ${remote} could not be asked: ${(error as Error).message})`;
    }
  }
  const commit = await resolveCommit(repoPath, ref, env);
  if (commit) return { commit, full: await fullRefName(repoPath, ref, env) };
  throw new DeployRefError(
    `"${ref}" names no deploy, and no tag, branch or commit of the repository ${repoPath}${remote ? ` or of its remote ${remote}` : ""}${problem}`,
  );
}
