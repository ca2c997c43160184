/**
 * The deploy-event sink that posts commit statuses and sends notifications. It never blocks the run or its
 * `[done]` line: calls go out in the background, and each outcome is written back into the deploy's log
 * (while it runs, as a line of its transcript; after it finished, appended to both files).
 */
import type { OutboundDeploy, OutboundSinks, QueuedDeploy, RefusedDeployment } from "../deploy/types.ts";
import type { DeployEvent, DeploySink } from "../types.ts";
import { commitInfos } from "../system/commit-infos.ts";
import { currentBranch, fullRefName, gitQuery } from "../system/git.ts";
import { appendOutbound, type OutboundEntry } from "../history/record.ts";
import { Redaction } from "../system/redact.ts";
import { outboundCredentials } from "../config/deploy-secrets.ts";
import { GithubDeployment } from "./deployments.ts";
import { GitlabDeployment } from "./gitlab-deployments.ts";
import { EventDeployment, queuedStatus, refusedStatus, resolveTarget, type EarlyOutcome } from "./deployment-event.ts";
import { notifyOutcome, Tail } from "./payloads.ts";
import { type Commits, notifier } from "./notifications.ts";
import type { OutboundCalls, OutboundRequest } from "./outbound.ts";
import { DEFAULT_OUTBOUND_TIMEOUT_MS } from "../config/schema-notify.ts";
import { fillTemplate, statusRequest, type StatusState } from "./commit-status.ts";
import { finalStatus } from "./final-status.ts";
import type { StatusTarget } from "../config/forge.ts";

/** The outbound sinks of an owner's deploys (a server's, a `service deploy`'s), their calls tracked by `calls`. */
export function outboundSinks(calls: OutboundCalls): OutboundSinks {
  /** The `queued` statuses posted while deploys waited: each deploy's sink writes its outcome into its log. */
  const queued = new Map<string, Promise<EarlyOutcome | undefined>>();
  const sinks = (deploy: OutboundDeploy) => {
    const early = queued.get(deploy.id);
    queued.delete(deploy.id);
    return outboundSink(deploy, calls, early);
  };
  return Object.assign(sinks, {
    queued: (deploy: QueuedDeploy) => {
      const early = queuedStatus(deploy, calls);
      if (early) queued.set(deploy.id, early);
    },
    refused: (deploy: RefusedDeployment, reason: string, kept: boolean) => {
      if (deploy.config.status) void calls.track(refusedStatus(deploy, reason, kept, calls));
    },
  });
}

/**
 * The sink of one deploy, its calls tracked by `calls` (its server's, or its `service deploy`'s); undefined when
 * neither `status` nor `notify` is set.
 */
export function outboundSink(
  ctx: OutboundDeploy,
  calls: OutboundCalls,
  early?: Promise<EarlyOutcome | undefined>,
): DeploySink | undefined {
  const targets = ctx.config.notify ?? [];
  if (!ctx.config.status && targets.length === 0) return undefined;
  const redaction = new Redaction([...ctx.secrets, ...outboundCredentials(ctx.config, ctx.cwd, ctx.env)]);
  const tail = new Tail();
  let finished = false;
  /** The commits of the pull, once its last line said them; the final status and notifications wait for it. */
  let pulled: Promise<Commits | undefined> | undefined;
  let statusChain: Promise<unknown> = Promise.resolve();
  let target: Promise<StatusTarget | { problem: string }> | undefined;
  const resolvedTarget = () => (target ??= resolveTarget(ctx));
  let problemSaid = false;
  let deployment: GithubDeployment | undefined;
  let gitlabDeployment: GitlabDeployment | undefined;
  /** Outcomes written to the .log while the deploy ran; the record gets them once it is finished. */
  const held: OutboundEntry[] = [];
  const record = (kind: "status" | "notify", label: string, what: string, ok: boolean, detail: string) => {
    const text = redaction.text(detail);
    const outcome: OutboundEntry = { kind, target: label, what, ok, detail: text, at: new Date().toISOString() };
    const said = ok
      ? `${label}: ${what} ${kind === "status" ? "posted" : "notification sent"}`
      : text.startsWith("not sent")
        ? `${label}: ${what} ${text}`
        : `${label} failed: ${text} (${what})`;
    if (finished) appendOutbound(ctx.log.jsonPath, ctx.log.logPath, [`[${kind}] ${said}`], [outcome]);
    else {
      ctx.log.write({ type: "step", step: kind, text: said });
      held.push(outcome);
    }
  };

  /** What was said while the deploy waited, written into its log; the Deployment then created, if any. */
  const created = early?.then((told) => {
    for (const { what, answer } of told?.said ?? []) record("status", "github", what, answer.ok, answer.detail);
    return told?.created;
  });

  const send = (
    kind: "status" | "notify",
    label: string,
    what: string,
    request: OutboundRequest,
    timeoutMs: number | undefined,
  ) =>
    calls.track(
      calls.send(request, { timeoutMs: timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS }).then((answer) => {
        record(kind, label, what, answer.ok, answer.detail);
        return answer;
      }),
    );

  const notify = notifier(ctx, calls, tail, redaction, record);

  /** The status's `target_url` (and a deployment's `log_url`) for `sha`, from the `targetUrl` template. */
  const linkOf = (resolved: StatusTarget, sha: string) =>
    resolved.targetUrl ? fillTemplate(resolved.targetUrl, { id: ctx.id, app: ctx.app, commit: sha }) : undefined;

  /** The commit status of `sha` (in order: a slow `pending` must not land after the final state), then the Deployment. */
  const postStatus = (sha: string, state: StatusState, description: string, then?: AfterFinal) => {
    const settings = ctx.config.status;
    if (!settings) return;
    // In order: a slow `pending` must not land after the final state.
    statusChain = calls.track(
      statusChain.then(async () => {
        const resolved = await resolvedTarget();
        if ("problem" in resolved) {
          // Said once: the final state would only repeat it.
          if (!problemSaid)
            record("status", settings.provider ?? "forge", state, false, resolved.problem.replace(/^status: /, ""));
          problemSaid = true;
          return;
        }
        const url = linkOf(resolved, sha);
        await send(
          "status",
          resolved.provider,
          state,
          statusRequest(resolved, sha, state, description, url),
          settings.timeoutMs,
        );
        await postDeployment(resolved, sha, state, description, url, then);
      }),
    );
  };

  /** The deploy's own Deployment (`status.deployments`); a deploy a deployment event started has one already. */
  const postDeployment = async (
    resolved: StatusTarget,
    sha: string,
    state: StatusState,
    description: string,
    url: string | undefined,
    then?: AfterFinal,
  ) => {
    const settings = ctx.config.status;
    if (!settings?.deployments || ctx.deployment) return;
    const environment = settings.environment ?? ctx.app ?? "production";
    const sendAs = (what: string, request: OutboundRequest) =>
      send("status", resolved.provider, what, request, settings.timeoutMs);
    if (resolved.provider === "github") {
      deployment ??= new GithubDeployment(resolved, environment, sendAs, ctx.config.environmentUrl, await created);
      await deployment.post(sha, state, description, url);
      await then?.(deployment, url);
    } else if (resolved.provider === "gitlab") {
      gitlabDeployment ??= new GitlabDeployment(resolved, environment, () => deployedRef(ctx), sendAs);
      await gitlabDeployment.post(sha, state);
    }
  };

  /** A deploy that ended before it pulled (cancelled while it waited): the Deployment made `queued` ends with it. */
  const endQueued = (state: StatusState, description: string) => {
    statusChain = calls.track(
      statusChain.then(async () => {
        const queuedOne = await created;
        const resolved = queuedOne && (await resolvedTarget());
        if (!queuedOne || !resolved || "problem" in resolved) return;
        await postDeployment(resolved, queuedOne.sha, state, description, linkOf(resolved, queuedOne.sha));
      }),
    );
  };

  const settings = ctx.config.status;
  const eventDeployment =
    ctx.deployment && settings
      ? new EventDeployment(
          ctx,
          ctx.deployment,
          resolvedTarget,
          (what, request) => send("status", "github", what, request, settings.timeoutMs),
          calls,
          created,
        )
      : undefined;

  return (event: DeployEvent) => {
    if (event.type === "start") eventDeployment?.post("in_progress", "Deploying…");
    if (event.type === "output") tail.add(event.data);
    else if (event.type === "step") tail.add(`[${event.step}] ${event.text}\n`);
    if (event.type === "step" && event.step === "pull" && !pulled) {
      const named = pulledCommits(event.text);
      if (!named) return;
      pulled = calls.track(
        Promise.all([revParse(ctx.repoPath, named.before, ctx.env), revParse(ctx.repoPath, named.after, ctx.env)]).then(
          async ([before, after]) => {
            const info = after ? ((await commitInfos(ctx.repoPath, [after], ctx.env)).get(after) ?? null) : null;
            return { before, after, info };
          },
        ),
      );
      void calls.track(
        pulled.then((commits = NO_COMMITS) => {
          notify("started", undefined, commits);
          if (commits.after) postStatus(commits.after, "pending", "Deploying…");
        }),
      );
    } else if (event.type === "step" && event.step === "watch" && event.text.startsWith("watching for ") && pulled) {
      // docs/watch.md: `pending` until the watch passes, so a gate that pins this status waits for it.
      void calls.track(
        pulled.then((commits = NO_COMMITS) => {
          if (commits.after) postStatus(commits.after, "pending", "Watching…");
        }),
      );
    } else if (event.type === "done") {
      const result = event.result;
      const outcome = notifyOutcome(result, event.cancelled ?? false, event.outcome);
      const [state, description] = finalStatus(result, outcome);
      // The final status goes on the commit that got `pending`: the one pulled. Before the pull there is none, but
      // a gate that did not open names the commit it refused (gate/stage.ts), and a refused request its own.
      const named = event.outcome === "refused" ? result.target?.sha : undefined;
      const refusedAt = result.gate?.commit && !result.gate.ok ? result.gate.commit : named;
      const refused = refusedAt ? { before: null, after: refusedAt } : NO_COMMITS;
      const after = pulled ?? Promise.resolve(refused);
      // After a rollback, GitHub is told which commit is live again (a new Deployment) and which is not (inactive).
      const rolledBackTo = result.rollback?.ok ? result.rollback.to : undefined;
      const then = (commits: Commits) => (deployment: GithubDeployment, url: string | undefined) =>
        rolledBackTo
          ? deployment.rolledBack(rolledBackTo, url)
          : ctx.trigger === "rollback" && state === "success" && commits.before && commits.before !== commits.after
            ? deployment.replaced(commits.before, url)
            : undefined;
      void calls.track(
        after.then((commits) =>
          commits?.after ? postStatus(commits.after, state, description, then(commits)) : endQueued(state, description),
        ),
      );
      // A superseded request's deployment will never be live: GitHub shows it inactive, with why.
      eventDeployment?.post(outcome === "superseded" ? "inactive" : state, description);
      void calls.track(after.then((commits) => notify(outcome, result, commits)));
      finished = true;
      // The record is finished right after this event: the outcomes so far join it then.
      queueMicrotask(() => {
        if (held.length > 0) appendOutbound(ctx.log.jsonPath, ctx.log.logPath, [], held.splice(0));
      });
    }
  };
}

/** What the deploy's GitHub Deployment does after its final status (a rollback's, see deployments.ts). */
type AfterFinal = (deployment: GithubDeployment, url: string | undefined) => Promise<void> | undefined;

const NO_COMMITS: Commits = { before: null, after: null };

/**
 * The commits the pull's last line names (`up to date at X`, `X -> Y`, `HEAD` without a remote; none after a
 * failed pull), or undefined for the pull's other lines.
 */
function pulledCommits(text: string): { before: string; after: string } | undefined {
  const upToDate = /^up to date at ([0-9a-f]{7,40})$/.exec(text);
  if (upToDate) return { before: upToDate[1]!, after: upToDate[1]! };
  const moved = /^(\S+) -> ([0-9a-f]{7,40})$/.exec(text);
  if (moved) return { before: /^[0-9a-f]{7,40}$/.test(moved[1]!) ? moved[1]! : "", after: moved[2]! };
  if (text.startsWith("no remote configured")) return { before: "HEAD", after: "HEAD" };
  if (text.startsWith("failed")) return { before: "", after: "" };
  return undefined;
}

/** The full commit of a short one (exact whatever HEAD does meanwhile); null when there is none. */
async function revParse(repoPath: string, commit: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  if (!commit) return null;
  const { code, stdout } = await gitQuery(repoPath, ["rev-parse", "--verify", "--quiet", `${commit}^{commit}`], env);
  return code === 0 && stdout ? stdout : null;
}

/** The branch or tag a deploy deployed (GitLab records it with the deployment): the ref named, else the branch. */
async function deployedRef(ctx: OutboundDeploy): Promise<{ ref: string; tag: boolean }> {
  const ref = ctx.ref ?? ctx.config.branch ?? (await currentBranch(ctx.repoPath, ctx.env)) ?? "HEAD";
  const full = await fullRefName(ctx.repoPath, ref, ctx.env);
  return full?.startsWith("refs/tags/") ? { ref: full.slice(10), tag: true } : { ref, tag: false };
}
