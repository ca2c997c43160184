/**
 * The previews of a server (docs/previews.md), loaded only when an app sets `previews`: a server without them holds
 * none of their code.
 */
import type { ResolvedApp } from "../config/apps.ts";
import type { PreviewDoor } from "../previews/door.ts";
import type { Logger } from "../system/logger.ts";
import type { AuditEvent } from "../audit/entry.ts";

export async function previewsWhenConfigured(
  apps: readonly ResolvedApp[],
  options: { cwd: string; logger: Logger; apps: () => readonly ResolvedApp[]; audit?: (event: AuditEvent) => void },
): Promise<PreviewDoor | undefined> {
  if (!apps.some((app) => app.previews)) return undefined;
  const { openPreviews } = await import("../previews/door.ts");
  return openPreviews(options);
}
