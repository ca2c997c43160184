/**
 * What `service check` says of `paths` and `skipMarkers` (ops/check.ts): how they read, a glob that matches no file
 * of the live commit (every push would be skipped), and apps that pull one clone in place (one app's pull changes
 * the files the other deploys).
 */
import { liveCommitOf } from "../history/live.ts";
import { short } from "../system/git.ts";
import { markersOf } from "./markers.ts";
import { globPattern } from "./paths.ts";
import { filesAt } from "./tip.ts";

interface CheckedApp {
  name?: string;
  repoPath: string;
  paths?: string[];
  skipMarkers?: boolean | string[];
  releases?: unknown;
}

/** The `paths` and `skip markers` rows of an app's block. */
export function triggerSettings(app: CheckedApp): { label: string; value: string }[] {
  const markers = markersOf(app.skipMarkers);
  return [
    { label: "paths", value: app.paths?.length ? app.paths.join(", ") : "any" },
    { label: "skip markers", value: markers.length ? markers.join(", ") : "off" },
  ];
}

/** A warning for each glob of `paths` that matches no file at the live commit (HEAD before any deploy). */
export async function pathsWarnings(cwd: string, prefix: string, app: CheckedApp, env = process.env) {
  if (!app.paths?.length) return [];
  const live = liveCommitOf(cwd, app.name)?.sha;
  const files = await filesAt(app.repoPath, live ?? "HEAD", env).catch(() => undefined);
  if (!files) return [];
  const at = live ? `the live commit ${short(live)}` : "HEAD";
  return app.paths
    .filter((glob) => !files.some((file) => globPattern(glob).test(file)))
    .map(
      (glob) =>
        `${prefix}paths glob "${glob}" matches no file at ${at}: every push that adds none would be skipped (a typo?)`,
    );
}

/** A warning for each repoPath that several apps pull in place (without their own `releases`). */
export function sharedCloneWarnings(apps: readonly CheckedApp[]): string[] {
  const byClone = new Map<string, string[]>();
  for (const app of apps) {
    if (app.releases) continue;
    byClone.set(app.repoPath, [...(byClone.get(app.repoPath) ?? []), app.name ?? "default"]);
  }
  return [...byClone]
    .filter(([, names]) => names.length > 1)
    .map(
      ([repoPath, names]) =>
        `apps ${names.map((n) => `"${n}"`).join(", ")} deploy the same clone ${repoPath} in place: one app's pull changes the files the other runs; give each its own clone or its own releases path`,
    );
}
