/**
 * Freeze windows at every trigger (docs/deploy-control.md "Freeze windows"): a window around now refuses the
 * webhook, the poller, `service deploy` and the admin API with its reason and end; force deploys and the record
 * says so; status shows it; a rollback is never frozen. Real repositories, the real CLI, real HTTP.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readPollState } from "../../src/control/poll.ts";
import { freezeAt } from "../../src/config/freeze.ts";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import { StreamReader, startGated } from "../_support/gate.ts";
import { lastLine, logFiles, makeRepo, post, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";
import { pollingServer } from "../_support/poll-helpers.ts";
import { deployRecords } from "../_support/webhook-fixtures.ts";

/** A dated window from a minute ago to an hour ahead (ISO, UTC), as SERVICE_FREEZE's JSON. */
function windowAroundNow(reason = "release review") {
  const from = new Date(Date.now() - 60_000).toISOString().slice(0, 19);
  const to = new Date(Date.now() + 3_600_000);
  const window = { from: `${from}Z`, to: to.toISOString().slice(0, 19), reason };
  // Shown in the window's zone (UTC), to the minute (seconds when not 0).
  const until = `${to.toISOString().slice(0, 10)} ${to.toISOString().slice(11, 19).replace(/:00$/, "")} UTC`;
  return { window, json: JSON.stringify([window]), until };
}

const api = (url: string, body: unknown = {}) =>
  fetch(url, {
    method: "POST",
    headers: { ...bearer(), "content-type": "application/json" },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));

describe("freeze windows refuse every trigger", () => {
  test("a freeze in force refuses the webhook (text and JSON), service deploy and the admin API with its reason and end; status shows it", async () => {
    const repo = makeRepo();
    const { json, until } = windowAroundNow();
    const env = { SERVICE_RUN_SCRIPT: "echo deployed", SERVICE_FREEZE: json };
    await using server = await startAdmin(repo.clone, env);
    expect(server.stdout.text + server.stderr.text).toContain(`deploys are frozen until ${until}: release review`);

    const text = await post(server.url, { secret: SECRET });
    expect(text.status).toBe(200);
    expect(await text.text()).toBe(`[skipped] frozen until ${until}: release review\n`);
    const asJson = await (await post(`${server.url}?format=json`, { secret: SECRET })).json();
    expect(asJson).toMatchObject({ skipped: true, frozen: true, reason: "release review", until });

    const cli = await runCli(["deploy"], { cwd: repo.clone, env });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`deploys are frozen until ${until}: release review (--force deploys anyway)`);

    const refused = await api(`${server.admin}/api/apps/default/deploy`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe("frozen");
    expect(refused.body.message).toContain(`frozen until ${until}: release review`);
    expect(refused.body.frozen).toMatchObject({ reason: "release review", until });
    expect(logFiles(repo.clone)).toEqual([]);
    const metrics = await (await fetch(`${server.admin}/metrics`)).text();
    expect(metrics).toContain('service_frozen_refusals_total{app="default"} 3');

    const status = await runCli(["status"], { cwd: repo.clone, env });
    expect(status.stdout).toMatch(new RegExp(`frozen:\\s+until ${until}: release review`));
    const statusJson = JSON.parse((await runCli(["status", "--json"], { cwd: repo.clone, env })).stdout);
    expect(statusJson[0].frozen).toMatchObject({ reason: "release review", until });
    expect(statusJson[0].nextFreeze).toBeNull();
    const apps = await (await fetch(`${server.admin}/api/apps`, { headers: bearer() })).json();
    expect(apps.apps[0].frozen).toMatchObject({ reason: "release review", until });
  });

  test("--force and force: true deploy through a freeze, and the record says forced", async () => {
    const repo = makeRepo();
    const { json, until } = windowAroundNow("holidays");
    const env = { SERVICE_RUN_SCRIPT: "echo deployed", SERVICE_FREEZE: json };
    const forced = await runCli(["deploy", "--force"], { cwd: repo.clone, env });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(`forced: deploys are frozen: holidays (until ${until})`);
    expect(lastLine(forced.stdout)).toBe("[done] ok=true exitCode=0");
    expect(deployRecords(repo.clone)[0].forced).toBe(true);

    await using server = await startAdmin(repo.clone, env);
    repo.push({ "b.txt": "b\n" }, "second");
    const accepted = await api(`${server.admin}/api/apps/default/deploy`, { force: true });
    expect(accepted.status).toBe(200);
    const record = await waitFor(
      () => deployRecords(repo.clone).find((r) => r.id === accepted.body.id && r.status === "done"),
      "the forced API deploy to end",
    );
    expect(record.forced).toBe(true);
    expect(record.result.ok).toBe(true);
  });

  test("a rollback is not frozen: service rollback and the API's rollback run during a freeze", async () => {
    const repo = makeRepo();
    const plain = { SERVICE_RUN_SCRIPT: "echo deployed" };
    const first = repo.head();
    expect((await runCli(["deploy"], { cwd: repo.clone, env: plain })).code).toBe(0);
    const second = repo.push({ "b.txt": "b\n" }, "second");
    expect((await runCli(["deploy"], { cwd: repo.clone, env: plain })).code).toBe(0);
    const env = { ...plain, SERVICE_FREEZE: windowAroundNow().json };

    const back = await runCli(["rollback"], { cwd: repo.clone, env });
    expect(back.code).toBe(0);
    expect(back.stdout).not.toContain("forced");
    expect(repo.head()).toBe(first);

    await using server = await startAdmin(repo.clone, env);
    const forth = await api(`${server.admin}/api/apps/default/rollback`, { to: second });
    expect(forth.status).toBe(200);
    await waitFor(() => repo.head() === second, "the API's rollback to run");
  });

  test("the poller skips a frozen app with the freeze's reason and end", async () => {
    const repo = makeRepo();
    const { window, until } = windowAroundNow("audit");
    repo.push({ "b.txt": "b\n" }, "second");
    await using _server = await pollingServer(repo, 50, { freeze: [{ ...window, timeZone: "UTC" }] });
    const state = await waitFor(() => readPollState(repo.clone, undefined), "a poll");
    expect(state.result).toBe("skipped");
    expect(state.detail).toBe(`frozen until ${until}: audit`);
    expect(logFiles(repo.clone)).toEqual([]);
  });

  test("a freeze or catchUp in the repository's config file changes nothing", async () => {
    const repo = makeRepo();
    const { window } = windowAroundNow();
    repo.push({ "service.yaml": `freeze:\n  - ${JSON.stringify(window)}\ncatchUp: true\n` }, "repository config");
    const cwd = repo.dir;
    writeFileSync(join(cwd, "service.yaml"), `secret: ${SECRET}\nrepoPath: ${repo.clone}\nrunScript: echo deployed\n`);
    await using server = await startServer(cwd);
    expect(lastLine(await (await post(server.url, { secret: SECRET })).text())).toBe("[done] ok=true exitCode=0");
    expect(readFileSync(join(repo.clone, "service.yaml"), "utf8")).toContain("freeze");
    // The file is in the clone now: the next deploy is not frozen either, and status knows no freeze.
    repo.push({ "d.txt": "d\n" }, "after");
    expect(lastLine(await (await post(server.url, { secret: SECRET })).text())).toBe("[done] ok=true exitCode=0");
    const status = JSON.parse((await runCli(["status", "--json"], { cwd })).stdout);
    expect(status[0].frozen).toBeNull();
  });

  test("a deploy that waited in the queue until a freeze began is refused when its turn comes, with nothing run", async () => {
    const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
    const window = { from: iso(Date.now() + 10_000), to: iso(Date.now() + 3_600_000), timeZone: "UTC", reason: "late" };
    await using gated = await startGated({ SERVICE_FREEZE: JSON.stringify([window]) });
    const { gate, server } = gated;
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    const second = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => second.text.includes("[queued]"), "the second deploy to queue");
    await waitFor(() => freezeAt([window], new Date()), "the freeze to begin", 30_000);
    gate.open();
    expect(lastLine(await first.done)).toBe("[done] ok=true exitCode=0");
    const text = await second.done;
    expect(text).toContain("not started: frozen until");
    expect(lastLine(text)).toStartWith("[done] ok=false");
    // Nothing more runs for it: a CLI run (a whole process start) later, the gate saw only the first deploy.
    expect((await runCli(["logs"], { cwd: gated.repo.clone, env: gated.env })).code).toBe(0);
    expect(gate.lines()).toHaveLength(2);
    expect(deployRecords(gated.repo.clone).at(-1).result.pull.after).toBeNull();
  });
});
