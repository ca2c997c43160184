/**
 * A delivery to an app with `tags` (docs/forges.md "Tag pushes"): the tag its push names, or none (curl without a
 * body: the highest matching tag), handed to the tag trigger (triggers/tags.ts, loaded with the first such app).
 * A branch push never gets here: `skipReason` lets it through only with `branch` set, and it deploys by `branch`.
 */
import type { ResolvedApp } from "../config/apps.ts";
import type { TagDecision } from "../triggers/tags.ts";
import type { ForgeDelivery } from "../types.ts";
import type { Skip } from "./forge.ts";
import { branchOfPush, type Payload } from "./payload.ts";
import { jsonResponse } from "./response.ts";

/**
 * The tag deploy of a delivery (its target), its skip, or a 502 when the remote cannot be asked; undefined for a
 * push of a branch (`branch` decides it).
 */
export async function tagDelivery(
  cwd: string,
  app: ResolvedApp,
  forge: ForgeDelivery,
  payload: Payload | undefined,
): Promise<{ target: Extract<TagDecision, { target: unknown }>["target"] } | { skip: Skip } | Response | undefined> {
  const pushed = branchOfPush(payload, app.branch);
  if (pushed && !pushed.ref.startsWith("refs/tags/")) return undefined;
  const { tagTrigger } = await import("../triggers/tags.ts");
  try {
    const decision = await tagTrigger(cwd, { ...app, tags: app.tags! }, pushed?.ref.slice(10), process.env);
    if ("target" in decision) return decision;
    return { skip: { ...forge, message: decision.skip.text, ...(pushed ? { ref: pushed.ref } : {}) } };
  } catch (error) {
    return jsonResponse(502, { error: "remote unavailable", message: (error as Error).message });
  }
}
