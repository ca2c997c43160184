/**
 * docs/gates.md: the gate as the admin listener and the queue see it: `waiting for checks` in `GET /api/apps` and
 * `/metrics`, the outcomes counted, the API's `skipGate`, and `queuePolicy: latest` joining a deploy that waits
 * at its gate, which then waits for the newer commit.
 */
import { describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, bearer, startAdmin } from "../_support/admin-helpers.ts";
import { StreamReader } from "../_support/gate.ts";
import { gatedService } from "../_support/github-checks.ts";
import { lastLine, post, SECRET, startServer, waitFor } from "../_support/helpers.ts";
import { deployRecords } from "../_support/webhook-fixtures.ts";

const series = (text: string, name: string) =>
  text
    .split("\n")
    .find((line) => line.startsWith(name))
    ?.split(" ")
    .pop();

describe("the gate, seen from the admin listener", () => {
  test("GET /api/apps and /metrics say a deploy waits for checks; /metrics counts how gates ended", async () => {
    const s = gatedService("{ checks: [ci/build] }");
    const sha = s.repo.push({ "a.txt": "1" });
    await using server = await startAdmin(s.cwd, { ...s.env, SERVICE_ADMIN_TOKEN: ADMIN_TOKEN });
    const out = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => out.text.includes("[gate] waiting for ci/build (missing)"), "the wait");
    const apps = await (await fetch(`${server.admin}/api/apps`, { headers: bearer() })).json();
    expect(apps.apps[0].running.waiting).toBe("checks");
    const waiting = await (await fetch(`${server.admin}/metrics`, { headers: bearer() })).text();
    expect(series(waiting, 'service_gate_waiting{app="default"}')).toBe("1");
    s.forge.status(sha, "ci/build", "failure");
    await out.done;
    expect(lastLine(out.text)).toBe("[done] ok=false exitCode=null");
    const after = await (await fetch(`${server.admin}/metrics`, { headers: bearer() })).text();
    expect(series(after, 'service_gate_waiting{app="default"}')).toBe("0");
    expect(series(after, 'service_gate_outcomes_total{app="default",outcome="shut"}')).toBe("1");
  });

  test('the API\'s "skipGate": true deploys without reading the checks; "force": true does not skip it', async () => {
    const s = gatedService("{ checks: [ci/build], waitMs: 1000 }");
    const sha = s.repo.push({ "a.txt": "1" });
    await using server = await startAdmin(s.cwd, s.env);
    const ask = (body: object) =>
      fetch(`${server.admin}/api/apps/default/deploy`, {
        method: "POST",
        headers: { ...bearer(), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await ask({ skipGate: "yes" })).status).toBe(400);
    const forced = await (await ask({ force: true })).json();
    const forcedRecord = await waitFor(
      () => deployRecords(s.cwd).find((r) => r.id === forced.id && r.status !== "running"),
      "the forced deploy",
    );
    expect(forcedRecord.result.gate.outcome).toBe("timeout");
    const reads = s.forge.reads();
    const skipped = await (await ask({ skipGate: true })).json();
    const record = await waitFor(
      () => deployRecords(s.cwd).find((r) => r.id === skipped.id && r.status !== "running"),
      "the skipped deploy",
    );
    expect(record.result).toMatchObject({ ok: true, gate: { ok: true, outcome: "skipped" } });
    expect(record.result.gate.reason).toContain("admin");
    expect(s.forge.reads()).toBe(reads);
    expect(s.repo.head()).toBe(sha);
  });
});

describe("queuePolicy latest and the gate", () => {
  test("a push arriving while a deploy waits at the gate joins it, and the gate waits for the newer commit", async () => {
    const s = gatedService("{ checks: [ci/build] }", ["queuePolicy: latest"]);
    const first = s.repo.push({ "a.txt": "1" });
    await using server = await startServer(s.cwd, s.env);
    const one = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => one.text.includes("[gate] waiting for ci/build (missing)"), "the wait");
    const newer = s.repo.push({ "a.txt": "2" });
    const two = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => one.text.includes(`a newer push joined: checking ${newer.slice(0, 12)} instead`), "the join");
    // The first commit turning green changes nothing now: the deploy waits for the newer one.
    s.forge.status(first, "ci/build", "success");
    await waitFor(
      () => one.text.includes("[gate] waiting for ci/build (missing)", one.text.indexOf("joined")),
      "the new wait",
    );
    s.forge.status(newer, "ci/build", "success");
    await Promise.all([one.done, two.done]);
    expect(lastLine(one.text)).toBe("[done] ok=true exitCode=0");
    expect(lastLine(two.text)).toBe("[done] ok=true exitCode=0");
    expect(s.repo.head()).toBe(newer);
    const records = deployRecords(s.cwd);
    expect(records).toHaveLength(1);
    expect(records[0].result.gate).toMatchObject({ outcome: "open", commit: newer });
  });
});

describe("a freeze and the gate", () => {
  test("a deploy that waited at the gate into a freeze is refused when the gate opens; nothing runs", async () => {
    // The window begins while the deploy waits: 10 s from now, for an hour.
    const from = new Date(Date.now() + 10_000);
    const to = new Date(from.getTime() + 3_600_000);
    const window = `{ from: "${from.toISOString()}", to: "${to.toISOString()}", reason: release freeze }`;
    const s = gatedService("{ checks: [ci/build] }", [`freeze: [${window}]`]);
    const before = s.repo.head();
    const sha = s.repo.push({ "a.txt": "1" });
    await using server = await startServer(s.cwd, s.env);
    const out = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => out.text.includes("[gate] waiting for ci/build (missing)"), "the wait");
    await waitFor(() => Date.now() > from.getTime(), "the freeze to begin", 30_000);
    s.forge.status(sha, "ci/build", "success");
    await out.done;
    expect(out.text).toContain("[gate] ci/build success on");
    expect(out.text).toMatch(/\[deploy\] not started: frozen until .*: release freeze; nothing runs/);
    expect(lastLine(out.text)).toBe("[done] ok=false exitCode=null");
    expect(s.repo.head()).toBe(before);
  });
});
