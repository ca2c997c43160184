/**
 * What decides an app's deploys, for its page (docs/admin.md "An app's page"): the refs it deploys, its gate, its
 * freeze windows with the one in force and the next, its limits and paths, so a screen tells why nothing deploys.
 * Read from the app's config in force; a token that is not admin is told no directory of the server (untold.ts), and
 * nothing here is a secret (the gate's forge token, the notify settings, the app's secret are never named).
 */
import type { ResolvedApp } from "../config/apps.ts";
import { freezeStatus } from "../control/status.ts";

export function appRules(app: ResolvedApp, hidesPaths: boolean, now = Date.now()) {
  const { gate, limits, releases } = app;
  return {
    ...(hidesPaths ? {} : { repoPath: app.repoPath }),
    branch: app.branch ?? null,
    tags: app.tags ?? null,
    deployRefs: app.deployRefs ?? null,
    events: app.events ?? null,
    gate: gate ? { checks: gate.checks, waitMs: gate.waitMs, bakeMs: gate.bakeMs } : null,
    freeze: {
      windows: (app.freeze ?? []).map(({ from, to, timeZone, reason }) => ({ from, to, timeZone, reason })),
      ...freezeStatus(app, now),
    },
    catchUp: app.catchUp ?? false,
    limits: limits
      ? {
          ...(limits.memory !== undefined ? { memory: limits.memory } : {}),
          ...(limits.cpu !== undefined ? { cpu: limits.cpu } : {}),
          ...(limits.tasks !== undefined ? { tasks: limits.tasks } : {}),
          ...(limits.nice !== undefined ? { nice: limits.nice } : {}),
          ...(limits.ioNice !== undefined ? { ioNice: limits.ioNice } : {}),
          ...(limits.leftovers !== undefined ? { leftovers: limits.leftovers } : {}),
        }
      : null,
    paths: app.paths ?? null,
    skipMarkers: app.skipMarkers ?? false,
    rollbackOnFailure: app.rollbackOnFailure,
    runTimeoutMs: app.runTimeoutMs,
    releases: releases ? { keep: releases.keep ?? null, ...(hidesPaths ? {} : { path: releases.path }) } : null,
  };
}
