/**
 * `GET /metrics` once the caller may see it (docs/admin.md "Metrics"): the counters of the apps `only` leaves (a
 * token scoped to apps sees its own), the build slots, the DORA gauges and, on a server that runs previews, theirs.
 */
import { pauseOf } from "../queue/pause.ts";
import { slotsStatus } from "../control/status.ts";
import { type AdminContext, appName } from "./api.ts";
import type { Only } from "./metrics.ts";
import type { DoraGauges } from "./metrics-dora.ts";

export async function metricsAnswer(
  context: AdminContext,
  dora: DoraGauges,
  only: Only | undefined,
): Promise<Response> {
  const inForce = context.apps();
  const apps = inForce
    .filter((app) => !only || only.app(appName(app)))
    .map((app) => ({ name: appName(app), waiting: context.waiting(app), paused: !!pauseOf(context.cwd, app.name) }));
  const slots = slotsStatus(context.cwd, inForce[0]?.maxConcurrentDeploys ?? 0);
  const names = apps.map((app) => app.name);
  const door = context.previews?.();
  // The previews' families come with their code, loaded only for a server that runs previews.
  const previews = door ? (await import("./previews-api.ts")).previewMetrics(context.cwd, door, names) : "";
  return new Response(context.metrics.render(apps, slots, only) + dora.render(names) + previews, {
    headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
  });
}
