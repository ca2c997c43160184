/**
 * What an authenticated delivery asks for, before the pause, the freeze and the paths: with `deploymentEvents` a
 * GitHub deployment event decided by its own rules (triggers/deployment.ts, loaded only then); else the branch and
 * events filters (`skipReason`); with `tags` a tag push, or a request naming no ref (the highest matching tag), by
 * the tag trigger (triggers/tags.ts, loaded with the first such app; docs/forges.md "Tag pushes"). A branch push
 * never reaches the tag trigger: `skipReason` lets it through only with `branch` set, and it deploys by `branch`.
 */
import type { ResolvedApp } from "../config/apps.ts";
import type { TriggerSkip } from "../triggers/types.ts";
import type { DeploymentInfo, ForgeDelivery, RollbackTarget } from "../types.ts";
import { type Skip, skipReason } from "./forge.ts";
import { branchOfPush, type Payload } from "./payload.ts";
import { jsonResponse } from "./json.ts";

export interface DeliveryAsk {
  /** Why it deploys nothing (answered `[skipped] …`). */
  skip?: Skip;
  /** The commit a deployment event or a tag names: it neither joins nor serves another request (latest). */
  target?: RollbackTarget;
  /** A deployment event's deployment: its statuses are posted. */
  deployment?: DeploymentInfo;
  /** Who asked, when the delivery says it better than its pusher (a deployment's creator). */
  actor?: string;
}

/**
 * The delivery's ask, or a 502 when the remote cannot be asked for its tags. `skipped` hears a push a trigger rule
 * did not deploy (counted, kept as the app's last skipped push).
 */
export async function deliveryAsk(
  cwd: string,
  app: ResolvedApp,
  forge: ForgeDelivery,
  payload: Payload | undefined,
  skipped: (skip: TriggerSkip) => Promise<void>,
): Promise<DeliveryAsk | Response> {
  if (app.deploymentEvents && forge.event?.toLowerCase() === "deployment") {
    const { deploymentTrigger } = await import("../triggers/deployment.ts");
    const decision = await deploymentTrigger(app, payload, process.env);
    if ("target" in decision)
      return {
        target: decision.target,
        deployment: decision.deployment,
        ...(decision.actor ? { actor: decision.actor } : {}),
      };
    await skipped(decision.skip);
    return { skip: { ...forge, message: decision.skip.text } };
  }
  const skip = skipReason(app, forge, payload);
  if (skip || !app.tags) return skip ? { skip } : {};
  const tagged = await tagDelivery(cwd, app, forge, payload);
  if (tagged && "skip" in tagged) await skipped({ reason: "tag", text: tagged.skip.message });
  return tagged ?? {};
}

/**
 * The tag deploy of a delivery (its target), its skip, or a 502 when the remote cannot be asked; undefined for a
 * push of a branch (`branch` decides it).
 */
async function tagDelivery(
  cwd: string,
  app: ResolvedApp,
  forge: ForgeDelivery,
  payload: Payload | undefined,
): Promise<{ target: RollbackTarget } | { skip: Skip } | Response | undefined> {
  const pushed = branchOfPush(payload, app.branch);
  if (pushed && !pushed.ref.startsWith("refs/tags/")) return undefined;
  const { tagTrigger } = await import("../triggers/tags.ts");
  try {
    const decision = await tagTrigger(cwd, { ...app, tags: app.tags! }, pushed?.ref.slice(10), process.env);
    if ("target" in decision) return { target: decision.target };
    return { skip: { ...forge, message: decision.skip.text, ...(pushed ? { ref: pushed.ref } : {}) } };
  } catch (error) {
    return jsonResponse(502, { error: "remote unavailable", message: (error as Error).message });
  }
}
