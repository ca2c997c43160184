/**
 * The statuses of a deployment a GitHub `deployment` event asked for (triggers/deployment.ts): `queued` while the
 * deploy waits in the queue, `in_progress` when it starts, then `success`, `failure` or `error`. Posted to that
 * deployment, never to a second one, through the `status` settings' token and API. A deploy that waits without one
 * gets the service's own Deployment, `queued`, when `status.deployments` asks for Deployments.
 */
import type { OutboundDeploy, QueuedDeploy, RefusedDeployment } from "../deploy/types.ts";
import type { DeploymentInfo } from "../types.ts";
import type { StatusTarget } from "../config/forge.ts";
import { currentBranch, originUrl } from "../system/git.ts";
import { statusTarget } from "../config/forge.ts";
import { DEFAULT_OUTBOUND_TIMEOUT_MS } from "../config/schema-notify.ts";
import type { OutboundAnswer, OutboundCalls, OutboundRequest } from "./outbound.ts";
import type { StatusState } from "./commit-status.ts";
import {
  deployLinks,
  deploymentStatusRequest,
  queuedDeployment,
  type DeploymentState,
  type QueuedDeployment,
} from "./deployments.ts";

/** What the forge was told while a deploy waited, to be written into the deploy's log once it has one. */
export interface EarlyOutcome {
  said: { what: string; answer: OutboundAnswer }[];
  /** The Deployment the service created for the waiting deploy (`status.deployments`), and the commit it names. */
  created?: QueuedDeployment;
}

type Target = StatusTarget | { problem: string };

export const resolveTarget = (deploy: Pick<OutboundDeploy, "config" | "repoPath" | "app" | "cwd" | "env">) =>
  originUrl(deploy.repoPath, deploy.env).then(
    (origin): Target =>
      deploy.config.status
        ? statusTarget(deploy.config.status, origin, deploy.app, deploy.cwd, deploy.env)
        : { problem: "status: not set" },
  );

/** One deployment's statuses, each sent after the one before it (a slow `queued` must not land after `success`). */
export class EventDeployment {
  private chain: Promise<unknown>;

  constructor(
    private readonly deploy: Pick<OutboundDeploy, "id" | "config">,
    private readonly deployment: DeploymentInfo,
    private readonly target: () => Promise<Target>,
    private readonly send: (what: string, request: OutboundRequest) => Promise<unknown>,
    private readonly calls: OutboundCalls,
    after: Promise<unknown> = Promise.resolve(),
  ) {
    this.chain = after;
  }

  post(state: StatusState | DeploymentState, description: string): Promise<unknown> {
    this.chain = this.calls.track(
      this.chain.then(async () => {
        const target = await this.target();
        // A problem with the settings is said by the commit status; a deployment is GitHub's.
        if ("problem" in target || target.provider !== "github") return;
        await this.send(`deployment ${state}`, this.request(target, state, description));
      }),
    );
    return this.chain;
  }

  private request(target: StatusTarget, state: StatusState | DeploymentState, description: string) {
    return deploymentStatusRequest(
      target,
      this.deployment.id,
      state,
      description,
      deployLinks(this.deploy.config, this.deploy.id),
    );
  }
}

/**
 * Posts `queued` for a deploy that waits in the queue: on its deployment event's deployment, or on a Deployment the
 * service creates for it (`status.deployments`, GitHub) on the commit it will deploy, or its branch (GitHub names
 * the branch's commit then). Its outcome is written into the
 * deploy's log when the deploy starts (notify/sink.ts hands it to the deploy's sink); undefined when nothing is said.
 */
export function queuedStatus(
  deploy: QueuedDeploy,
  calls: OutboundCalls,
): Promise<EarlyOutcome | undefined> | undefined {
  const status = deploy.config.status;
  if (!status || (!deploy.deployment && !status.deployments)) return undefined;
  const early: EarlyOutcome = { said: [] };
  const timeoutMs = status.timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS;
  const target = resolveTarget(deploy);
  const send = async (what: string, request: OutboundRequest) => {
    const answer = await calls.send(request, { timeoutMs });
    early.said.push({ what, answer });
    return answer;
  };
  const description = "Waiting in the deploy queue";
  if (deploy.deployment)
    return new EventDeployment(deploy, deploy.deployment, () => target, send, calls)
      .post("queued", description)
      .then(() => early);
  return calls.track(
    target.then(async (resolved) => {
      if ("problem" in resolved || resolved.provider !== "github") return early;
      const ref = deploy.commit ?? deploy.config.branch ?? (await currentBranch(deploy.repoPath, deploy.env));
      if (!ref) return early;
      const environment = status.environment ?? deploy.app ?? "production";
      const created = await queuedDeployment(
        resolved,
        ref,
        environment,
        description,
        {
          environment,
          ...deployLinks(deploy.config, deploy.id),
        },
        send,
      );
      return created ? { ...early, created } : early;
    }),
  );
}

/**
 * Posts `error` with why on the deployment of a deployment event refused before anything was queued (deploys are
 * paused or frozen): GitHub shows it ended instead of waiting forever; or, `kept` for the catch-up, `queued` until
 * the end of the pause or the freeze decides it again. No deploy, so no `log_url`.
 */
export async function refusedStatus(
  deploy: RefusedDeployment,
  reason: string,
  kept: boolean,
  calls: OutboundCalls,
): Promise<void> {
  const target = await resolveTarget(deploy);
  if ("problem" in target || target.provider !== "github") return;
  const links = deploy.config.environmentUrl ? { environment_url: deploy.config.environmentUrl } : {};
  const timeoutMs = deploy.config.status?.timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS;
  const [state, description] = kept
    ? (["queued", `Held: ${reason}; deploys when it ends`] as const)
    : (["error", `Not deployed: ${reason}`] as const);
  await calls.send(deploymentStatusRequest(target, deploy.deployment.id, state, description, links), { timeoutMs });
}
