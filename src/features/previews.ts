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

/** A server's previews: opened once an app sets `previews` (loaded only then), closed with the server. */
export class ServerPreviews {
  private door: PreviewDoor | undefined;
  private opening: Promise<PreviewDoor | undefined> | undefined;

  constructor(private readonly options: Parameters<typeof previewsWhenConfigured>[1]) {}

  /** The door, once open. */
  get current(): PreviewDoor | undefined {
    return this.door;
  }

  async open(apps: readonly ResolvedApp[]): Promise<PreviewDoor | undefined> {
    if (this.door || !apps.some((app) => app.previews)) return this.door;
    // Two deliveries at once open one door.
    this.opening ??= previewsWhenConfigured(apps, this.options).then((door) => (this.door = door));
    return this.opening;
  }

  async stop(): Promise<void> {
    await this.door?.stop();
    this.door = undefined;
    this.opening = undefined;
  }
}
