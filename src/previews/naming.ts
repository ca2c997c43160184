/**
 * A preview's names (docs/previews.md "Configuration"): the branch made safe for a host name, the URL from
 * `previews.url`, and the port it keeps for its life.
 */
import type { Preview, PreviewSettings } from "./types.ts";

const MAX_SLUG = 40;

/** Lowercased, each run outside `[a-z0-9]` a `-`, trimmed of `-`, cut to 40; `-<number>` when another open preview has it. */
export function slugOf(branch: string, number: number, others: readonly Pick<Preview, "slug" | "number">[]): string {
  const base =
    branch
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, MAX_SLUG)
      .replace(/-+$/, "") || "pr";
  return others.some((p) => p.slug === base && p.number !== number) ? `${base}-${number}` : base;
}

/** `previews.url` with its placeholders: the number, the slug, the app's name (all of a host's alphabet). */
export function urlOf(settings: Pick<PreviewSettings, "url">, number: number, slug: string, app: string): string {
  return settings.url
    .replaceAll("{number}", String(number))
    .replaceAll("{branch}", slug)
    .replaceAll("{app}", app.toLowerCase().replace(/[^a-z0-9-]+/g, "-"));
}

/** The lowest port of the range no preview of any app holds; undefined when every one is taken. */
export function freePort(settings: Pick<PreviewSettings, "ports">, taken: ReadonlySet<number>): number | undefined {
  for (let port = settings.ports.from; port <= settings.ports.to; port++) if (!taken.has(port)) return port;
  return undefined;
}
