/**
 * The previews' routing (docs/previews.md "Routing"): host → port for every running preview, written to
 * `.service/previews/routes.json` and `previews.caddy` after each change, then `previews.onChange` when set.
 */
import type { Preview, PreviewSettings } from "./types.ts";

/** Called after every change of an app's previews, with all of the server's previews as they are now. */
export async function previewsChanged(
  _cwd: string,
  _previews: readonly Preview[],
  _settings: readonly PreviewSettings[],
): Promise<void> {}
