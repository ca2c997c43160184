/**
 * A refusal after acknowledgement is a record of the refused commit (docs/deploy-control.md "Requests"): a gate that
 * shut makes a `refused` record under the commit it refused, and a cancel at the gate a `cancelled` one under the
 * commit it cancelled; `service logs` shows each row under that commit, never as FAILED under the live one; /metrics
 * counts the refusal apart from the deploys.
 */
import { describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, adminUrl } from "../_support/admin-helpers.ts";
import { StreamReader } from "../_support/gate.ts";
import { gatedService } from "../_support/github-checks.ts";
import { lastLine, post, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";
import { deployRecords } from "../_support/webhook-fixtures.ts";
import { fakeApi } from "../_support/outbound-fixtures.ts";

describe("refusals after acknowledgement", () => {
  test("a gate that shut is a refused row under the refused commit; a cancel at the gate a cancelled one under its commit", async () => {
    const s = gatedService("{ checks: [ci/build] }");
    const live = s.repo.head();
    const refused = s.repo.push({ "a.txt": "1" });
    s.forge.status(refused, "ci/build", "failure");
    const env = { ...s.env, SERVICE_ADMIN_PORT: "0", SERVICE_ADMIN_TOKEN: ADMIN_TOKEN };
    await using server = await startServer(s.cwd, env);
    const text = await (await post(`${server.url}/`, { secret: SECRET })).text();
    expect(lastLine(text)).toBe("[done] ok=false exitCode=null");
    const [record] = deployRecords(s.cwd);
    expect(record).toMatchObject({ status: "refused" });
    expect(record.reason).toStartWith("gate: ci/build failure");
    expect(record.result.target.sha).toBe(refused);
    expect(record.result.commit.sha).toBe(live);

    const cancelledAt = s.repo.push({ "b.txt": "1" });
    const out = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => out.text.includes("[gate] waiting for ci/build (missing)"), "the wait");
    expect((await runCli(["cancel", out.id()!], { cwd: s.cwd, env })).code).toBe(0);
    await out.done;
    const cancelled = deployRecords(s.cwd).find((r) => r.id === out.id());
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.result.target.sha).toBe(cancelledAt);

    const rows = (await runCli(["logs"], { cwd: s.cwd, env })).stdout.trim().split("\n");
    const rowOf = (id: string) => rows.find((row) => row.includes(id.slice(0, 8)))!;
    expect(rowOf(record.id)).toContain(refused.slice(0, 7));
    expect(rowOf(record.id)).toContain("refused (gate: ci/build failure");
    expect(rowOf(record.id)).not.toContain("FAILED");
    expect(rowOf(out.id()!)).toContain(cancelledAt.slice(0, 7));
    expect(rowOf(out.id()!)).toContain("cancelled");
    const failed = (await runCli(["logs", "--failed"], { cwd: s.cwd, env })).stdout;
    expect(failed).not.toContain(record.id.slice(0, 8));

    const metrics = await fetch(`${adminUrl(server)}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    }).then((r) => r.text());
    expect(metrics).toContain('service_refusals_total{app="default",reason="gate"} 1');
    expect(metrics).not.toContain('service_deploys_total{app="default",outcome="failed"}');
  });

  test("a refusal notifies when `on` names refused: the refused commit and why, never as a failure", async () => {
    const hook = fakeApi([200]);
    const s = gatedService("{ checks: [ci/build] }", [
      "notify:",
      `  - url: ${hook.url}/hook`,
      "    on: [refused]",
      `  - url: ${hook.url}/failed`,
      "    on: [failed]",
    ]);
    const refused = s.repo.push({ "a.txt": "1" });
    s.forge.status(refused, "ci/build", "failure");
    await using server = await startServer(s.cwd, s.env);
    expect(lastLine(await (await post(`${server.url}/`, { secret: SECRET })).text())).toBe(
      "[done] ok=false exitCode=null",
    );
    const [sent] = await waitFor(() => (hook.seen.length > 0 ? hook.seen : undefined), "the notification");
    expect(sent!.path).toBe("/hook");
    const payload = sent!.json();
    expect(payload.outcome).toBe("refused");
    expect(payload.target.sha).toBe(refused);
    expect(payload.error).toContain("ci/build failure");
    // Nothing went to the entry that listens for failures.
    expect(hook.seen.filter((seen) => seen.path === "/failed")).toEqual([]);
  });
});
