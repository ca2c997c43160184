/**
 * The statuses of a deployment a GitHub `deployment` event asked for (triggers/deployment.ts): `queued` while the
 * deploy waits in the queue, `in_progress` when it starts, then `success`, `failure` or `error`. Posted to that
 * deployment, never to a second one, through the `status` settings' token and API.
 */
import type { OutboundDeploy, QueuedDeploy } from "../deploy/types.ts";
import type { DeploymentInfo } from "../types.ts";
import type { StatusTarget } from "../config/forge.ts";
import { originUrl } from "../system/git.ts";
import { statusTarget } from "../config/forge.ts";
import { DEFAULT_OUTBOUND_TIMEOUT_MS } from "../config/schema.ts";
import type { OutboundAnswer, OutboundCalls, OutboundRequest } from "./outbound.ts";
import type { StatusState } from "./commit-status.ts";
import { deployLinks, deploymentStatusRequest, type DeploymentState } from "./deployments.ts";

/** A status's outcome, to be written into the deploy's log once it has one. */
export interface EarlyOutcome {
  what: string;
  answer: OutboundAnswer;
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
 * Posts `queued` for a deploy that waits in the queue; its outcome is written into the deploy's log when the
 * deploy starts (notify/sink.ts hands it to the deploy's sink).
 */
export function queuedStatus(deploy: QueuedDeploy, calls: OutboundCalls): Promise<EarlyOutcome | undefined> {
  let outcome: EarlyOutcome | undefined;
  const timeoutMs = deploy.config.status?.timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS;
  const target = resolveTarget(deploy);
  const events = new EventDeployment(
    deploy,
    deploy.deployment,
    () => target,
    async (what, request) => {
      outcome = { what, answer: await calls.send(request, { timeoutMs }) };
    },
    calls,
  );
  return events.post("queued", "Waiting in the deploy queue").then(() => outcome);
}
