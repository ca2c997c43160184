/**
 * A kept or recovered request decided again as of now, before it runs (docs/deploy-control.md "Replay"): the commit it
 * named must still be on the remote's ref (its tip or an ancestor: a force-push that removed it ends it) and must not be
 * live already or an ancestor of what is live (no silent downgrade); a push's `paths`, skip markers and `tags` rules
 * are asked again. The pause, the freeze, the gate and the signatures are the deploy's own stages: a kept request runs
 * only once neither pause nor freeze holds, and a gate or a signature that refuses it then makes a record of it.
 */
import type { ResolvedApp } from "../config/apps.ts";
import type { PathsRecord } from "../history/record.ts";
import type { StoredRequest } from "../history/requests.ts";
import { liveCommitOf } from "../history/live.ts";
import { decidePush, decidesPushes } from "../triggers/decide.ts";
import { fetchTip } from "../triggers/tip.ts";
import { headCommit, isAncestor, short } from "../system/git.ts";
import type { Logger } from "../system/logger.ts";
import type { RollbackTarget } from "../types.ts";

/** What runs of a request decided again: its target (a tag chosen again), what its paths matched; or why it does not. */
export type Decision =
  | { runs: true; target?: RollbackTarget; paths?: PathsRecord }
  | { runs: false; reason: string }
  /** The remote could not be asked: the request stays kept, and the next look tries again. */
  | { runs: false; retry: string };

export async function decideAgain(
  cwd: string,
  app: ResolvedApp,
  request: StoredRequest,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Decision> {
  const { target, pushed } = request.named;
  // No deploy on record: what the clone has checked out is what runs.
  const live = liveCommitOf(cwd, app.name)?.sha ?? (await headCommit(app.repoPath, env));
  // A rollback puts back what was live before: it is a downgrade on purpose, and stays one unless it is live already.
  if (target && request.trigger === "rollback") {
    return target.commit === live ? { runs: false, reason: `${short(target.commit)} is live already` } : { runs: true };
  }
  // A tag, named by a tag push or chosen as the highest in range: the tag rules decide it again.
  if (app.tags && (!target || target.tag)) {
    const { tagTrigger } = await import("../triggers/tags.ts");
    const decided = await tagTrigger(cwd, { ...app, tags: app.tags }, target?.tag, env).catch(
      (error: Error) => ({ retry: `the remote's tags cannot be read: ${error.message}` }) as const,
    );
    if ("retry" in decided) return { runs: false, retry: decided.retry };
    if ("skip" in decided) return { runs: false, reason: decided.skip.text };
    const chosen = decided.target.commit;
    if (chosen === live) return { runs: false, reason: `tag ${decided.target.tag} (${short(chosen)}) is live already` };
    return { runs: true, target: decided.target };
  }
  // What it deploys is on a ref of the remote: the branch's tip when its turn comes, or the commit it named there.
  const ref =
    target?.ref && !target.ref.startsWith("refs/tags/") ? target.ref.replace(/^refs\/heads\//, "") : undefined;
  const fetched = await fetchTip({ repoPath: app.repoPath, branch: ref ?? app.branch }, env);
  if ("error" in fetched) return { runs: false, retry: fetched.error };
  const { tip, branch } = fetched;
  const named = target?.commit ?? pushed;
  if (named && named !== tip && !(await isAncestor(app.repoPath, named, tip, env)))
    return {
      runs: false,
      reason: `${short(named)} is no longer on ${branch} at the remote (its tip is ${short(tip)})`,
    };
  // A named commit deploys exactly; a push deploys the tip, which holds what it named.
  const deploys = target?.commit ?? tip;
  if (live && deploys === live) return { runs: false, reason: `${short(deploys)} is live already` };
  if (live && (await isAncestor(app.repoPath, deploys, live, env)))
    return { runs: false, reason: `${short(deploys)} is older than ${short(live)}, which is live` };
  if (target || !decidesPushes(app)) return { runs: true };
  const decision = await decidePush(cwd, app, undefined, { fetch: true, logger, env });
  if (decision.skip) return { runs: false, reason: decision.skip.text };
  return { runs: true, ...(decision.paths ? { paths: decision.paths } : {}) };
}
