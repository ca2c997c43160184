/**
 * What `service check` says of an app's `watch` (docs/watch.md): the settings in words and, for a Prometheus query,
 * its value now (the query run once, placeholders filled in from the live commit) or why it cannot be read. The
 * query's code (watch/prometheus.ts) is loaded only for a configuration that has one.
 */
import { describeWatch, resolveWatch, type WatchSettings } from "../config/watch.ts";
import { headCommit } from "../system/git.ts";

/** The watch in words with its value now; `warning` when the query cannot be read now. */
export async function checkWatch(
  app: { watch?: WatchSettings; repoPath: string; name?: string },
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ value: string; warning?: string }> {
  if (!app.watch) return { value: "(none)" };
  const watch = resolveWatch(app.watch, env);
  const described = describeWatch(watch);
  if (!watch.prometheus) return { value: described };
  const { queryPrometheus } = await import("../watch/prometheus.ts");
  const commit = await headCommit(app.repoPath, env).catch(() => null);
  const reading = await queryPrometheus(watch.prometheus, {
    cwd,
    values: { commit, previousCommit: null, deployId: "check", app: app.name ?? "" },
  });
  if ("value" in reading) return { value: `${described}; now ${reading.value}` };
  const label = app.name ? `app "${app.name}": ` : "";
  return {
    value: `${described}; cannot be read now`,
    warning: `${label}watch: the query cannot be read now: ${reading.problem} (every check of a deploy's watch would fail)`,
  };
}
