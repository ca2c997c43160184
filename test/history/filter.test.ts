/**
 * The history's filters by app, outcome and start time (docs/log-files.md "Reading the history: `service logs`"):
 * `service logs --app --outcome --since` and the admin API's `GET /api/deploys?app=&outcome=&since=` keep the
 * same deploys. An old deploy is made for real, under libfaketime.
 */
import { describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, adminUrl } from "../_support/admin-helpers.ts";
import { runCli, startServer } from "../_support/helpers.ts";
import { hasFaketime, twoAppHistory } from "../_support/history-fixtures.ts";

const ids = (json: string) => (JSON.parse(json) as { app: string; startedAt: string }[]).map((e) => e.app);

describe('filters of the deploy history (docs/log-files.md "Reading the history: `service logs`")', () => {
  test.skipIf(!hasFaketime)(
    "service logs --app, --outcome and --since; a bad value is one line and exit 1",
    async () => {
      const cwd = await twoAppHistory();
      const logs = async (...args: string[]) => {
        const result = await runCli(["logs", "--json", ...args], { cwd });
        expect(result.code).toBe(0);
        return ids(result.stdout);
      };
      expect(await logs()).toEqual(["api", "web", "web"]);
      expect(await logs("--since", "2h")).toEqual(["api", "web"]);
      expect(await logs("--since", "7d")).toEqual(["api", "web", "web"]);
      expect(await logs("--app", "web", "--since", "2h")).toEqual(["web"]);
      expect(await logs("--outcome", "failed")).toEqual(["api"]);
      expect(await logs("--outcome", "ok,rolled-back", "--app", "web")).toEqual(["web", "web"]);

      const none = await runCli(["logs", "--outcome", "cancelled", "--since", "1h"], { cwd });
      expect(none.stdout).toBe("no deploys (outcome cancelled, since 1h)\n");
      for (const [option, value] of [
        ["--outcome", "nope"],
        ["--since", "yesterday"],
      ] as const) {
        const bad = await runCli(["logs", option, value], { cwd });
        expect(bad.code).toBe(1);
        expect(bad.stderr.trim().split("\n")).toHaveLength(1);
        expect(bad.stderr).toContain(`${option} expects`);
      }
    },
  );

  test.skipIf(!hasFaketime)(
    "GET /api/deploys?app=&outcome=&since= filters the same way; a bad value is 400",
    async () => {
      const cwd = await twoAppHistory();
      await using server = await startServer(cwd, { SERVICE_ADMIN_PORT: "0", SERVICE_ADMIN_TOKEN: ADMIN_TOKEN });
      const api = (query: string) =>
        fetch(`${adminUrl(server)}/api/deploys?${query}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      const list = async (query: string) => {
        const res = await api(query);
        expect(res.status).toBe(200);
        return ids(await res.text());
      };
      expect(await list("since=2h")).toEqual(["api", "web"]);
      expect(await list("app=web&outcome=ok&since=7d")).toEqual(["web", "web"]);
      expect(await list("outcome=failed")).toEqual(["api"]);
      for (const query of ["outcome=bogus", "since=bogus"]) {
        const res = await api(query);
        expect(res.status).toBe(400);
        expect((await res.json()).message).toContain(`${query.split("=")[0]} expects`);
      }
    },
  );
});
