/**
 * The previews on the admin listener (docs/previews.md "Operating"): `GET /api/apps/<app>/previews` (any token that
 * sees the app), `POST /api/apps/<app>/previews/<n>/deploy` and `…/teardown` (a deploy or admin token of the app), and their
 * counters on /metrics.
 */
import { previewList } from "../previews/listing.ts";
import type { PreviewDoor } from "../previews/door.ts";
import type { AppWithPreviews } from "../previews/manager.ts";
import { readPreviews } from "../previews/state.ts";
import { shown } from "../system/shown.ts";
import { refusal, type Scope } from "../tokens/scope.ts";
import { type AdminContext, apiError, appName, forbidden, redactedJson } from "./api.ts";

/** What the dashboard and the API may do to one preview: build it again at its pull ref's head now, or tear it down. */
const ACTIONS = {
  deploy: { audit: "preview deploy", done: "is being built again at its pull ref's head" },
  teardown: { audit: "preview teardown", done: "is being torn down" },
} as const;

/** The answer to a request under `/api/apps/<app>/previews`, or undefined when it is none of theirs. */
export async function previewsAnswer(
  context: AdminContext,
  door: PreviewDoor | undefined,
  acting: { scope: Scope; actor: string },
  parts: (string | undefined)[],
  method: string,
): Promise<Response | undefined> {
  const [resource, name, what, number, action, extra] = parts;
  if (resource !== "apps" || !name || what !== "previews" || extra !== undefined) return undefined;
  // The apps the token sees: another's is as unknown as a name no config has.
  const app = context.apps().find((each) => appName(each) === name);
  if (!app) return apiError(404, "not found", `no app named ${JSON.stringify(name.slice(0, 100))}`);
  if (!app.previews) return apiError(404, "not found", `app ${JSON.stringify(name)} sets no previews`);
  if (number === undefined && method === "GET") return redactedJson(context, 200, previewList(context.cwd, [app])[0]);
  if ((action !== "teardown" && action !== "deploy") || method !== "POST" || number === undefined) return undefined;
  const denied = refusal(acting.scope, "deploy", name);
  if (denied) return forbidden(context, acting.scope, denied);
  if (!/^\d{1,9}$/.test(number)) return apiError(400, "bad request", "expected a pull request's number");
  if (!readPreviews(context.cwd, name).previews.some((p) => p.number === Number(number)))
    return apiError(404, "not found", `pull request #${number} has no preview`);
  if (!door) return apiError(409, "conflict", "this server runs no previews (set previews and restart it)");
  const withPreviews = app as AppWithPreviews;
  const n = Number(number);
  // Both run on: a build ends in the preview's state (and its log), a teardown too; neither may end the server.
  const said = (text: string) => door.logger.warn(`previews ${name}: ${shown(text)}`);
  const work =
    action === "deploy"
      ? door.manager.deployByHand(withPreviews, n, acting.actor)
      : door.manager.teardown(withPreviews, n, `by ${acting.actor}`);
  work.then(
    (answer) => answer && answer.outcome !== "accepted" && said(answer.text),
    (error: Error) => said(`pull request #${n}: ${error.message}`),
  );
  context.audit?.({
    actor: acting.actor,
    action: ACTIONS[action].audit,
    app: name,
    target: `#${number}`,
    outcome: "ok",
  });
  return redactedJson(context, 202, {
    ok: true,
    message: `pull request #${number}: its preview ${ACTIONS[action].done}`,
  });
}

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const labels = (values: Record<string, string>) =>
  `{${Object.entries(values)
    .map(([key, value]) => `${key}="${escapeLabel(value)}"`)
    .join(",")}}`;

/** The previews' families of /metrics: the previews now, and the deploys, teardowns and refusals counted. */
export function previewMetrics(cwd: string, door: PreviewDoor | undefined, apps: string[]): string {
  if (!door) return "";
  const out: string[] = [];
  const family = (name: string, type: string, help: string) =>
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  family("service_previews", "gauge", "Previews of pull requests kept now, by app.");
  const withPreviews = door.manager.names();
  for (const app of apps.filter((name) => withPreviews.includes(name)))
    out.push(`service_previews${labels({ app })} ${readPreviews(cwd, app).previews.length}`);
  const counters: [string, string, string, Map<string, number>][] = [
    [
      "service_preview_deploys_total",
      "outcome",
      "Preview builds ended, by app and outcome.",
      door.manager.counters.deploys,
    ],
    [
      "service_preview_teardowns_total",
      "outcome",
      "Preview teardowns, by app and outcome.",
      door.manager.counters.teardowns,
    ],
    [
      "service_preview_refusals_total",
      "reason",
      "Pull requests refused at the door, by app and reason.",
      door.manager.counters.refusals,
    ],
  ];
  for (const [name, label, help, map] of counters) {
    family(name, "counter", help);
    for (const [key, n] of map) {
      const [app = "", value = ""] = key.split("\0");
      if (apps.includes(app)) out.push(`${name}${labels({ app, [label]: value })} ${n}`);
    }
  }
  return `${out.join("\n")}\n`;
}
