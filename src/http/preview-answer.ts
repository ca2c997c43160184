/**
 * The webhook's answer to a delivery previews took (docs/previews.md "Events"): skipped or refused at the door,
 * `[skipped] <why>` (JSON: `skipped: true`) as any skipped delivery; a build or a teardown started, `[preview] <what>`.
 */
import type { PreviewAnswer } from "../previews/manager.ts";
import type { ForgeDelivery } from "../types.ts";
import { skippedResponse } from "./forge.ts";
import { jsonResponse } from "./json.ts";

export function previewResponse(answer: PreviewAnswer, forge: ForgeDelivery, json: boolean): Response {
  if (answer.outcome !== "accepted")
    return skippedResponse(
      { ...forge, message: answer.text, ...(answer.reason ? { reason: answer.reason } : {}) },
      json,
    );
  if (json) return jsonResponse(200, { ok: true, preview: true, message: answer.text, ...forge });
  return new Response(`[preview] ${answer.text}\n`, { headers: { "content-type": "text/plain; charset=utf-8" } });
}
