/**
 * Ten apps for the wall (docs/admin.md "The wall"), each in a state a tile shows: deployed ok, failed, deploying (a
 * run script that waits for a file), waiting for the build slot, frozen with a push kept for its catch-up, paused,
 * never deployed; a read token (grafana) for the kiosk. The real CLI, real repositories.
 */
import { expect } from "bun:test";
import { join } from "node:path";
import { ADMIN_TOKEN, type AdminServer, bearer, startAdmin } from "./admin-helpers.ts";
import { makeRepo, SECRET, tempDir, waitFor } from "./helpers.ts";
import { TOKEN_VALUES, writeToken } from "./token-fixtures.ts";
import { postAs, writeServiceYaml } from "./webhook-fixtures.ts";

export const WALL_APPS = ["web", "api", "worker", "reports", "billing", "search", "auth", "mailer", "cdn", "docs"];

const iso = (ms: number) => `${new Date(Date.now() + ms).toISOString().slice(0, 19)}Z`;

export interface Wall {
  server: AdminServer;
  cwd: string;
  /** Lets billing's deploy (held in its run step) end. */
  go: string;
}

interface AppView {
  name: string;
  running: { waiting: string | null; phase: string | null } | null;
  last: { outcome: string } | null;
  catchUp: unknown;
}

/** The apps as the API says them now. */
export async function apps(admin: string): Promise<AppView[]> {
  return ((await (await fetch(`${admin}/api/apps`, { headers: bearer() })).json()) as { apps: AppView[] }).apps;
}

export async function wallService(): Promise<Wall> {
  const cwd = tempDir("service-wall-");
  const go = join(cwd, "go");
  const grafana = join(cwd, "grafana.token");
  writeToken(grafana, TOKEN_VALUES.grafana);
  // Bounded: at most 60 s, then it fails.
  const held = `i=0; while [ ! -f ${go} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; [ -f ${go} ]`;
  const scripts: Record<string, string> = { reports: "exit 1", billing: held };
  writeServiceYaml(cwd, {
    maxConcurrentDeploys: 1,
    tokens: [{ name: "grafana", role: "read", file: grafana }],
    apps: WALL_APPS.map((name) => ({
      name,
      host: `${name}.example`,
      path: `/${name}`,
      repoPath: makeRepo().clone,
      runScript: scripts[name] ?? "true",
      secret: SECRET,
      branch: "main",
      ...(name === "web"
        ? {
            freeze: [{ from: iso(7 * 86_400_000), to: iso(8 * 86_400_000), timeZone: "UTC", reason: "year-end" }],
            paths: ["src/**", "package.json"],
          }
        : {}),
      ...(name === "auth"
        ? { catchUp: true, freeze: [{ from: iso(-60_000), to: iso(3_600_000), timeZone: "UTC", reason: "audit" }] }
        : {}),
    })),
  });
  const server = await startAdmin(cwd, { SERVICE_SECRET: undefined });
  const { admin } = server;
  const post = (path: string, body: unknown = {}) =>
    fetch(`${admin}/api/${path}`, { method: "POST", headers: bearer(ADMIN_TOKEN), body: JSON.stringify(body) });
  for (const name of ["web", "api", "worker", "reports", "cdn"]) {
    expect((await post(`apps/${name}/deploy`)).status).toBeLessThan(300);
    await waitFor(async () => (await apps(admin)).find((a) => a.name === name)?.last, `${name}'s deploy to end`);
  }
  expect((await post("apps/mailer/pause", { reason: "database migration review" })).status).toBe(200);
  // A push to the frozen app: refused, kept for its catch-up.
  const pushed = await postAs(server.url, "auth.example", "/auth", {
    secret: SECRET,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ref: "refs/heads/main", pusher: { name: "dana" } }),
  });
  await pushed.text();
  await waitFor(async () => (await apps(admin)).find((a) => a.name === "auth")?.catchUp, "auth's kept push");
  // Billing holds the one build slot in its run step; search waits for it.
  expect((await post("apps/billing/deploy")).status).toBeLessThan(300);
  await waitFor(async () => (await apps(admin)).find((a) => a.name === "billing")?.running?.phase === "run", "run");
  expect((await post("apps/search/deploy")).status).toBeLessThan(300);
  await waitFor(
    async () => (await apps(admin)).find((a) => a.name === "search")?.running?.waiting === "slot",
    "search waiting for the slot",
  );
  return { server, cwd, go };
}
