/**
 * The previews as `service previews` and `GET /api/apps/<app>/previews` show them (docs/previews.md "Operating"):
 * each preview (its PR, branch, head, status, URL, port) and the refusals at the door (the PR, its head, why).
 * The JSON keeps outsiders' texts as sent; the lines show them escaped.
 */
import type { ResolvedApp } from "../config/apps.ts";
import { shown } from "../system/shown.ts";
import { readPreviews, type Refusal } from "./state.ts";
import type { Preview } from "./types.ts";

export interface AppPreviewList {
  app: string;
  previews: Preview[];
  refusals: Refusal[];
}

/** The previews of the apps that set `previews` (only `app` when named). */
export function previewList(cwd: string, apps: readonly ResolvedApp[], app?: string): AppPreviewList[] {
  return apps
    .filter((a) => a.previews && (app === undefined || a.name === app))
    .map((a) => {
      const name = a.name ?? "default";
      const { previews, refusals } = readPreviews(cwd, name);
      return { app: name, previews: previews.map(({ groups: _groups, ...p }) => p as Preview), refusals };
    });
}

/** The list as lines for a terminal: one per preview, then one per refusal (the newest ten). */
export function previewLines(list: AppPreviewList[]): string[] {
  const lines: string[] = [];
  for (const { app, previews, refusals } of list) {
    lines.push(`${app}: ${previews.length} preview${previews.length === 1 ? "" : "s"}`);
    for (const p of previews.sort((a, b) => a.number - b.number)) {
      const why = p.reason ? ` (${shown(p.reason)})` : "";
      lines.push(
        `  #${p.number} ${p.status}${why} ${shown(p.branch)} ${p.head.slice(0, 12)} ${p.url} port ${p.port} updated ${p.updated}`,
      );
    }
    for (const r of refusals.slice(-10))
      lines.push(`  refused #${r.number} ${r.head.slice(0, 12)} ${r.reason}: ${shown(r.text)} (${r.at})`);
  }
  return lines;
}
