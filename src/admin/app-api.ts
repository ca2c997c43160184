/**
 * The admin API of one app's page: its stats (history/stats.ts), its DORA figures (history/dora-read.ts) and its
 * forge's links (config/forge-links.ts), what decides its deploys (app-rules.ts), and its recent watch values
 * (history/watch-values.ts).
 */
import { appLinks } from "../config/forge-links.ts";
import { DORA_DAYS } from "../history/dora.ts";
import { readDora } from "../history/dora-read.ts";
import { appStats } from "../history/stats.ts";
import { watchValues } from "../history/watch-values.ts";
import { type AdminContext, apiError, appName, redactedJson } from "./api.ts";
import { appRules } from "./app-rules.ts";

/**
 * `GET /api/apps/<app>/stats[?days=7|30|90]`: the last deploys as bars, the 7- and 30-day success rate and median,
 * the DORA figures over `days` (30 unless told), the links, the rules, the last watched deploys' watches.
 */
export async function appStatsAnswer(context: AdminContext, name: string, query: URLSearchParams): Promise<Response> {
  // The apps the token sees: another's is as unknown as a name no config has.
  const app = context.apps().find((each) => appName(each) === name);
  if (!app) return apiError(404, "not found", `no app named ${JSON.stringify(name.slice(0, 100))}`);
  const asked = query.get("days");
  const days = asked === null ? 30 : Number(asked);
  if (!(DORA_DAYS as readonly number[]).includes(days))
    return apiError(400, "bad request", `days: expected 7, 30 or 90, got ${JSON.stringify(asked!.slice(0, 20))}`);
  const { figures, partial } = readDora(context.cwd, [name], days);
  const dora = { ...figures[0]!, partial };
  const rules = appRules(app, context.hidesPaths ?? false);
  return redactedJson(context, 200, {
    ...appStats(context.cwd, name),
    dora,
    links: await appLinks(app),
    rules,
    watches: watchValues(context.cwd, name),
  });
}
