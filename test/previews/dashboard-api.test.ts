/**
 * docs/previews.md "Operating", what the dashboard uses: `POST /api/apps/<app>/previews/<n>/deploy` builds a preview
 * again at its pull ref's head now (a deploy or admin token of the app; audited), beside the teardown; `GET /api/apps`
 * counts each app's previews.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { readAudit } from "../../src/audit/read.ts";
import { auditDir } from "../../src/audit/trail.ts";
import { ADMIN_TOKEN, bearer, startAdmin, type AdminServer } from "../_support/admin-helpers.ts";
import { makeRepo, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import {
  deliverPullRequest,
  githubPullRequest,
  previewOf,
  previewsKey,
  pushPullHead,
} from "../_support/pull-requests.ts";
import { TOKEN_VALUES, writeToken } from "../_support/token-fixtures.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";

const servers: AdminServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

/** Two apps, web with previews and api without; a read token, and a deploy token of each app. */
async function twoApps() {
  const [web, api] = [makeRepo(), makeRepo()];
  const cwd = tempDir();
  const file = (name: string) => join(cwd, `${name}.token`);
  const values = {
    grafana: TOKEN_VALUES.grafana,
    "ci-web": TOKEN_VALUES["ci-web"],
    "ci-api": "ci-api-token-0123456789abcd",
  };
  for (const [name, value] of Object.entries(values)) writeToken(file(name), value);
  writeServiceYaml(cwd, {
    apps: [
      {
        name: "web",
        host: "localhost",
        path: "/hook",
        secret: SECRET,
        repoPath: web.clone,
        runScript: "true",
        previews: previewsKey(cwd),
      },
      { name: "api", host: "api.example.com", path: "/hook", repoPath: api.clone, runScript: "true" },
    ],
    tokens: [
      { name: "grafana", role: "read", file: file("grafana") },
      { name: "ci-web", role: "deploy", apps: ["web"], file: file("ci-web") },
      { name: "ci-api", role: "deploy", apps: ["api"], file: file("ci-api") },
    ],
  });
  const server = await startAdmin(cwd);
  servers.push(server);
  return { cwd, web, server, values };
}

describe("previews: what the dashboard asks", () => {
  test("Deploy again builds the preview at its pull ref's head now; only a deploy or admin token of the app", async () => {
    const { cwd, web, server, values } = await twoApps();
    const first = pushPullHead(web, 41);
    const delivered = await deliverPullRequest(server, githubPullRequest(41, first));
    expect(await delivered.text()).toContain("[preview]");
    await waitFor(() => previewOf(cwd, 41, ["running"], "web"), "the preview");

    const apps = await (await fetch(`${server.admin}/api/apps`, { headers: bearer() })).json();
    const byName = Object.fromEntries(apps.apps.map((app: { name: string }) => [app.name, app]));
    expect(byName.web.previews).toBe(1);
    expect(byName.api).not.toHaveProperty("previews");

    const again = (token: string, number: number | string = 41) =>
      fetch(`${server.admin}/api/apps/web/previews/${number}/deploy`, { method: "POST", headers: bearer(token) });
    const read = await again(values.grafana);
    expect(read.status).toBe(403);
    const other = await again(values["ci-api"]);
    expect(other.status).toBe(404);
    expect((await other.json()).message).toContain('no app named "web"');
    expect((await again(values["ci-web"], 99)).status).toBe(404);
    expect((await again(values["ci-web"], "x")).status).toBe(400);
    expect(previewOf(cwd, 41, ["running"], "web").head).toBe(first);

    const second = pushPullHead(web, 41, { "app.txt": "pr 41, again\n" });
    const asked = await again(values["ci-web"]);
    expect(asked.status).toBe(202);
    expect(await asked.json()).toEqual({
      ok: true,
      message: "pull request #41: its preview is being built again at its pull ref's head",
    });
    await waitFor(() => previewOf(cwd, 41, ["running"], "web")?.head === second, "the preview built again");
    expect(readAudit(auditDir(cwd)).find((line) => line.action === "preview deploy")).toMatchObject({
      actor: "token:ci-web@127.0.0.1",
      app: "web",
      target: "#41",
      outcome: "ok",
    });
    const admin = await again(ADMIN_TOKEN);
    expect(admin.status).toBe(202);
  });
});
