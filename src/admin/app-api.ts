/** The admin API of one app's page: its stats (history/stats.ts) and its forge's links (config/forge-links.ts). */
import { appLinks } from "../config/forge-links.ts";
import { appStats } from "../history/stats.ts";
import { type AdminContext, apiError, appName, redactedJson } from "./api.ts";

/** `GET /api/apps/<app>/stats`: the last deploys as bars, the 7- and 30-day success rate and median, the links. */
export async function appStatsAnswer(context: AdminContext, name: string): Promise<Response> {
  // The apps the token sees: another's is as unknown as a name no config has.
  const app = context.apps().find((each) => appName(each) === name);
  if (!app) return apiError(404, "not found", `no app named ${JSON.stringify(name.slice(0, 100))}`);
  return redactedJson(context, 200, { ...appStats(context.cwd, name), links: await appLinks(app) });
}
