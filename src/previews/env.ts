/**
 * The environment of a preview's scripts (docs/previews.md "The wall"), built from nothing: a PATH, HOME (the
 * preview's directory), LANG, the preview's own variables and `previews.env`. Never the service's environment,
 * the app's `env`, `envFile` or any secret of production.
 */
import { readUserFile } from "../system/files.ts";
import type { Preview, PreviewSettings } from "./types.ts";

const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const MAX_VALUE_FILE = 64 * 1024;

/** The variable that marks every process of a preview (its teardown finds them by it, wherever they went). */
export const MARKER = "SERVICE_PREVIEW_ID";

/** The marker's `NAME=value` for a preview. */
export const markerOf = (preview: Pick<Preview, "app" | "number" | "created">) =>
  `${MARKER}=${preview.app}/pr-${preview.number}/${Date.parse(preview.created) || 0}`;

/** The variables of a preview's scripts; a `previews.env` file that cannot be read is a problem (thrown). */
export function previewEnv(
  settings: Pick<PreviewSettings, "env">,
  preview: Preview,
  actor: string,
  path = process.env.PATH,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(settings.env))
    env[name] = typeof value === "string" ? value : readUserFile(value.file, MAX_VALUE_FILE).replace(/\r?\n$/, "");
  const [marker, id] = markerOf(preview).split("=") as [string, string];
  return {
    ...env,
    PATH: path || PATH,
    HOME: preview.dir,
    LANG: "C.UTF-8",
    SERVICE_PREVIEW: "1",
    SERVICE_PREVIEW_NUMBER: String(preview.number),
    SERVICE_PREVIEW_BRANCH: preview.branch,
    SERVICE_PREVIEW_URL: preview.url,
    SERVICE_PREVIEW_PORT: String(preview.port),
    SERVICE_PREVIEW_TITLE: preview.title,
    SERVICE_COMMIT: preview.head,
    SERVICE_ACTOR: actor,
    [marker]: id,
  };
}
