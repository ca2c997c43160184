import { existsSync } from "node:fs";
import { findDeploy, isDeployRef, listDeploys, readDeployRecord, type HistoryEntry } from "../history/read.ts";
import type { Deployer } from "../deploy/deployer.ts";
import type { DeployResult, RollbackTarget } from "../types.ts";
import { fullRefName, headCommit, resolveCommit, short } from "../system/git.ts";
import type { DeployOptions } from "../deploy/types.ts";
import type { DeploySettings } from "../steps/context.ts";

/** A rollback that cannot be queued: the target names nothing deployable. Nothing was queued. */
export class RollbackTargetError extends Error {
  override name = "RollbackTargetError";
}

/** `last-ok` names what is live already: there is nothing to roll back, and nothing was queued. */
export class AlreadyLiveError extends RollbackTargetError {
  override name = "AlreadyLiveError";
}

/**
 * The commit a deploy left checked out: the one its rollback reset to, else the one it pulled (or reset) to. With
 * releases, the commit of the release it left live: its own, or the one it replaced.
 */
export function commitLeftBy(entry: HistoryEntry): string | null {
  const result = readDeployRecord(entry.jsonPath)?.result as
    | {
        pull?: { after?: unknown };
        rollback?: { to?: unknown };
        release?: { live?: unknown; commit?: unknown; previous?: { commit?: unknown } | null };
      }
    | undefined;
  const release = result?.release;
  const commit = release
    ? release.live
      ? release.commit
      : release.previous?.commit
    : entry.rolledBack
      ? result?.rollback?.to
      : result?.pull?.after;
  return typeof commit === "string" && /^[0-9a-f]{40,64}$/.test(commit) ? commit : null;
}

const wasOk = (entry: HistoryEntry) => entry.status === "done" && entry.ok === true && !entry.rolledBack;

/**
 * What `service rollback [<ref>]` deploys, in the repository at `repoPath`: `ref` is a deploy id (or prefix,
 * or `last-ok`) whose commit is taken, or a commit of the repository; none is the newest ok deploy whose
 * commit differs from HEAD (with releases: from the live release's). With releases, `ref` may also name a kept
 * release. `app` limits the deploys looked at (multi-app mode); `resolved` is the deploy `ref` names when the caller
 * looked it up (null: none). Throws RollbackTargetError.
 */
export async function rollbackTarget(
  cwd: string,
  settings: Pick<DeploySettings, "repoPath" | "releases">,
  ref: string | undefined,
  app: string | undefined,
  env: NodeJS.ProcessEnv,
  resolved?: HistoryEntry | null,
): Promise<RollbackTarget> {
  const { repoPath, releases } = settings;
  // Loaded only with releases: the default configuration never reads a releases directory.
  const files = releases ? await import("../releases/files.ts") : undefined;
  const layout = files && releases && files.layoutOf(releases, cwd);
  const mine = (entry: HistoryEntry) => app === undefined || entry.app === app;
  const fromDeploy = (entry: HistoryEntry): RollbackTarget => {
    const commit = commitLeftBy(entry);
    if (!commit)
      throw new RollbackTargetError(
        `deploy ${entry.id} left no commit checked out to go back to (its outcome: ${entry.ok ? "ok" : "failed"})`,
      );
    return { commit, deployId: entry.id };
  };
  if (ref === undefined || ref === "last-ok") {
    const liveId = files && layout ? files.liveReleaseId(layout) : undefined;
    const live = files && layout ? (liveId ? (files.readMeta(layout, liveId)?.commit ?? null) : null) : undefined;
    const head = live !== undefined ? live : await headCommit(repoPath, env);
    const found = listDeploys(cwd).find(
      (entry) => mine(entry) && wasOk(entry) && (ref !== undefined || (commitLeftBy(entry) ?? head) !== head),
    );
    // last-ok is the newest ok deploy whatever its commit: when that commit is live, a rollback would change nothing.
    const left = ref === "last-ok" && found ? commitLeftBy(found) : null;
    if (found && left && left === head)
      throw new AlreadyLiveError(
        `already live: nothing to roll back (the newest ok deploy, ${found.id.slice(0, 8)}, left ${short(left)}, which is live)`,
      );
    if (!found)
      throw new RollbackTargetError(
        ref === undefined
          ? `no earlier ok deploy with a commit other than the ${live !== undefined ? "live release's" : "current HEAD"}${head ? ` (${short(head)})` : ""} to roll back to`
          : "no ok deploy to roll back to",
      );
    return fromDeploy(found);
  }
  if (files && layout && files.RELEASE_ID.test(ref)) {
    const meta = files.readMeta(layout, ref);
    if (meta?.state !== "complete")
      throw new RollbackTargetError(`release ${ref} is not a kept release of ${layout.releases}`);
    return { commit: meta.commit, deployId: meta.deployId, release: meta.id };
  }
  const deploy = appDeploy(cwd, ref, app, RollbackTargetError, resolved);
  if (deploy) return fromDeploy(deploy);
  // Not a deploy: a commit of the repository (a hash, a tag, a branch), resolved here so nothing is queued for a typo.
  if (ref.startsWith("-")) throw new RollbackTargetError(`"${ref}" is neither a deploy id nor a commit`);
  const commit = existsSync(repoPath) ? await resolveCommit(repoPath, ref, env) : null;
  if (!commit)
    throw new RollbackTargetError(`"${ref}" is neither a deploy id nor a commit of the repository ${repoPath}`);
  // A tag is named so its signature is checked too (docs/security.md "Tags").
  const full = await fullRefName(repoPath, ref, env);
  return { commit, deployId: null, ...(full?.startsWith("refs/tags/") ? { tag: full.slice(10) } : {}) };
}

/**
 * The deploy of `app` (every deploy without one) that `ref` names by its id or a prefix of it; undefined when it
 * names none. Throws `Failure` when it names several, or a deploy of another app. `resolved`: the deploy the caller
 * found `ref` to name (null: none), looked up no more.
 */
export function appDeploy(
  cwd: string,
  ref: string,
  app: string | undefined,
  Failure: new (message: string) => Error,
  resolved?: HistoryEntry | null,
): HistoryEntry | undefined {
  // Resolved by the caller (the admin API, among the deploys its token sees): null names no deploy.
  if (resolved === null) return undefined;
  if (resolved === undefined && (!isDeployRef(ref) || ref === "last")) return undefined;
  const found = resolved ?? findDeploy(cwd, ref);
  if (typeof found === "string") {
    if (found.includes("matches")) throw new Failure(found);
    return undefined;
  }
  if (app !== undefined && found.app !== app)
    throw new Failure(`deploy ${found.id} is a deploy of app "${found.app ?? "(none)"}", not of "${app}"`);
  return found;
}

/**
 * `service rollback` and `server.rollback`: resolves `ref` (see rollbackTarget), then deploys that commit through
 * the same queue and logs as any deploy, with `trigger: "rollback"`. Throws RollbackTargetError, with nothing
 * queued, when `ref` names nothing deployable; QueueFullError when the queue is full.
 */
export async function rollbackDeploy(
  deployer: Deployer,
  ref: string | undefined,
  options: Omit<DeployOptions, "trigger" | "target">,
  control: { force?: boolean } = {},
): Promise<DeployResult> {
  const env = options.env ?? process.env;
  const target = await rollbackTarget(options.cwd, options.config, ref, options.app, env);
  return deployer.deploy({ ...options, trigger: "rollback", target }, control);
}
