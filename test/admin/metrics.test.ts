import { describe, expect, test } from "bun:test";
import { Metrics } from "../../src/admin/metrics.ts";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { lastLine, makeRepo, post, SECRET, waitFor } from "../_support/helpers.ts";

const promtool = Bun.which("promtool") ?? undefined;
if (!promtool) console.warn("promtool (Debian package prometheus) is missing: the /metrics format checks are skipped");

/** `promtool check metrics` on the text: its exit code and what it said. */
function promtoolCheck(text: string): { code: number; output: string } {
  const result = Bun.spawnSync([promtool!, "check", "metrics"], {
    stdin: new TextEncoder().encode(text),
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: result.exitCode, output: `${result.stdout}${result.stderr}` };
}

/** The value of one sample line, by its full name with labels. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics", () => {
  test.skipIf(!promtool)(
    "the Prometheus text passes promtool check metrics, before and after deploys of every outcome",
    async () => {
      const metrics = new Metrics();
      const apps = [
        { name: "web", waiting: 2, paused: true },
        { name: 'odd"name\\', waiting: 0, paused: false },
      ];
      expect(promtoolCheck(metrics.render(apps)).code).toBe(0);
      metrics.webhookRequest("web", 200);
      metrics.webhookRequest("", 404);
      const base = { id: "x", ok: true, rolledBack: false, error: null, durationMs: 1500 };
      const sink = metrics.observe("web", undefined);
      sink({ type: "start", id: "x", startedAt: new Date(), trigger: "webhook", repoPath: "/srv/web" });
      expect(metrics.render(apps)).toContain('service_deploys_running{app="web"} 1');
      sink({ type: "done", result: base as never });
      metrics.observe(
        'odd"name\\',
        undefined,
      )({ type: "done", result: { ...base, ok: false, error: "cancelled: stopping" } as never, cancelled: true });
      metrics.deployEnded("web", "skipped");
      metrics.deployEnded("web", "failed", 90_000);
      metrics.deployEnded("web", "rolled_back", 4_000_000);
      const text = metrics.render(apps);
      const check = promtoolCheck(text);
      expect(check.output).toBe("");
      expect(check.code).toBe(0);
      expect(sample(text, 'service_deploys_total{app="web",outcome="ok"}')).toBe(1);
      expect(sample(text, 'service_deploys_total{app="odd\\"name\\\\",outcome="cancelled"}')).toBe(1);
      expect(sample(text, 'service_deploy_duration_seconds_bucket{app="web",le="5"}')).toBe(1);
      expect(sample(text, 'service_deploy_duration_seconds_bucket{app="web",le="+Inf"}')).toBe(3);
      expect(sample(text, 'service_deploy_duration_seconds_count{app="web"}')).toBe(3);
      expect(sample(text, 'service_deploys_running{app="web"}')).toBe(0);
      expect(sample(text, 'service_deploys_waiting{app="web"}')).toBe(2);
      expect(sample(text, 'service_paused{app="web"}')).toBe(1);
      expect(sample(text, 'service_paused{app="odd\\"name\\\\"}')).toBe(0);
      expect(sample(text, 'service_webhook_requests_total{app="",status="404"}')).toBe(1);
    },
  );

  test("a real service counts webhook statuses and deploy outcomes; /metrics on loopback needs no token", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "echo ok", SERVICE_BRANCH: "main" });
    const { admin } = server;
    const deployed = await post(server.url, {
      secret: SECRET,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ref: "refs/heads/main" }),
    });
    expect(lastLine(await deployed.text())).toBe("[done] ok=true exitCode=0");
    const skipped = await post(server.url, {
      secret: SECRET,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ref: "refs/heads/other" }),
    });
    expect(skipped.status).toBe(200);
    await skipped.text();
    const refused = await post(server.url, { secret: "wrong-secret-0123456789" });
    expect(refused.status).toBe(401);
    await refused.text();
    const text = await waitFor(async () => {
      const res = await fetch(`${admin}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("version=0.0.4");
      const body = await res.text();
      return sample(body, 'service_deploys_total{app="default",outcome="ok"}') === 1 ? body : undefined;
    }, "the deploy to be counted");
    expect(sample(text, 'service_webhook_requests_total{app="default",status="200"}')).toBe(2);
    expect(sample(text, 'service_webhook_requests_total{app="default",status="401"}')).toBe(1);
    expect(sample(text, 'service_deploys_total{app="default",outcome="skipped"}')).toBe(1);
    expect(sample(text, 'service_deploy_duration_seconds_count{app="default"}')).toBe(1);
    expect(text).toMatch(/^service_info\{version="[^"]+"\} 1$/m);
    expect(text).toMatch(/^service_last_deploy_timestamp_seconds\{app="default",outcome="ok"\} \d+/m);
    expect(text).not.toContain(ADMIN_TOKEN);
    expect(text).not.toContain(SECRET);
    if (promtool) expect(promtoolCheck(text).code).toBe(0);
  });

  test("/metrics forwarded by a proxy needs the token even on a loopback address", async () => {
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone);
    const { admin } = server;
    for (const header of ["x-forwarded-for", "forwarded", "x-real-ip"]) {
      const res = await fetch(`${admin}/metrics`, { headers: { [header]: "203.0.113.9" } });
      expect([header, res.status]).toEqual([header, 401]);
      await res.text();
    }
    const ok = await fetch(`${admin}/metrics`, {
      headers: { "x-forwarded-for": "203.0.113.9", authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("service_info");
  });
});
