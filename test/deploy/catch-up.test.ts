/**
 * Catch-up (docs/deploy-control.md "Catch-up after a pause or a freeze"): with `catchUp`, a push refused during a
 * pause or a freeze is deployed once when it ends (trigger catch-up, the push's actor), across a restart too;
 * without it, nothing is deployed until the next push. The tests wait for the records, never for a time.
 */
import { describe, expect, test } from "bun:test";
import { freezeAt } from "../../src/config/freeze.ts";
import { keptRequests } from "../../src/history/requests.ts";
import { readAudit } from "../../src/audit/read.ts";
import { auditDir } from "../../src/audit/trail.ts";
import { lastLine, logFiles, makeRepo, post, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";
import { deployRecords } from "../_support/webhook-fixtures.ts";

/** A dated window (ISO, UTC) from now to `seconds` ahead. */
function shortWindow(seconds: number) {
  const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
  const window = {
    from: iso(Date.now() - 1000),
    to: iso(Date.now() + seconds * 1000),
    timeZone: "UTC",
    reason: "short",
  };
  return { window, json: JSON.stringify([window]) };
}

/** A push as a forge sends it: who pushed is in the body. */
const push = (url: string, pusher: string) =>
  post(url, {
    secret: SECRET,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ pusher: { name: pusher } }),
  });

const catchUps = (cwd: string) => deployRecords(cwd).filter((r) => r.trigger === "catch-up");

/** The actor of the newest request kept for the catch-up, if any. */
const refusedPush = (cwd: string, app: string | undefined) => {
  const kept = keptRequests(cwd, app).at(-1);
  return kept && { actor: kept.actor };
};

describe("catch-up after a pause or a freeze", () => {
  test("a push refused during a freeze is deployed once when the freeze ends, with trigger catch-up and the pusher as actor", async () => {
    const repo = makeRepo();
    const { json } = shortWindow(8);
    const env = {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "echo deployed",
      SERVICE_FREEZE: json,
      SERVICE_CATCH_UP: "true",
    };
    await using server = await startServer(repo.clone, env);
    const pushed = repo.push({ "b.txt": "b\n" }, "second");
    expect(await (await push(server.url, "alice")).text()).toContain("[skipped] frozen until");
    expect(refusedPush(repo.clone, undefined)?.actor).toBe("alice");
    const record = await waitFor(
      () => catchUps(repo.clone).find((r) => r.status === "done"),
      "the catch-up deploy to end",
    );
    expect(record.actor).toBe("alice");
    expect(record.result.ok).toBe(true);
    expect(repo.head()).toBe(pushed);
    expect(refusedPush(repo.clone, undefined)).toBeUndefined();
    // Once: the memory is gone, and a later look finds nothing to do.
    expect((await runCli(["logs"], { cwd: repo.clone, env })).code).toBe(0);
    expect(catchUps(repo.clone)).toHaveLength(1);
  });

  test("a refusal outlives a restart: a server started after the window ended catches up", async () => {
    const repo = makeRepo();
    const { window, json } = shortWindow(8);
    const env = {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "echo deployed",
      SERVICE_FREEZE: json,
      SERVICE_CATCH_UP: "1",
    };
    const server = await startServer(repo.clone, env);
    const pushed = repo.push({ "b.txt": "b\n" }, "second");
    expect(await (await push(server.url, "bob")).text()).toContain("[skipped] frozen until");
    await server.stop();
    expect(refusedPush(repo.clone, undefined)?.actor).toBe("bob");
    await waitFor(() => !freezeAt([window], new Date()), "the window to end");
    await using _again = await startServer(repo.clone, env);
    const record = await waitFor(() => catchUps(repo.clone).find((r) => r.status === "done"), "the catch-up");
    expect(record.actor).toBe("bob");
    expect(repo.head()).toBe(pushed);
  });

  test("service pause, a push, service resume: with catchUp the push is deployed once", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed", SERVICE_CATCH_UP: "true" };
    await using server = await startServer(repo.clone, env);
    expect((await runCli(["pause", "--reason", "maintenance"], { cwd: repo.clone, env })).code).toBe(0);
    const pushed = repo.push({ "b.txt": "b\n" }, "second");
    expect(await (await push(server.url, "carol")).text()).toBe("[skipped] paused: maintenance\n");
    expect(refusedPush(repo.clone, undefined)?.actor).toBe("carol");
    expect((await runCli(["resume"], { cwd: repo.clone, env })).code).toBe(0);
    const record = await waitFor(() => catchUps(repo.clone).find((r) => r.status === "done"), "the catch-up");
    expect(record.actor).toBe("carol");
    expect(repo.head()).toBe(pushed);
    expect(catchUps(repo.clone)).toHaveLength(1);
    // The audit trail says who the catch-up deployed for, and which deploy it was.
    const line = readAudit(auditDir(repo.clone)).find((l) => l.action === "catch-up");
    expect(line).toMatchObject({ actor: "carol", app: "default", deploy: record.id, outcome: "ok" });
  });

  test("a kept push whose commit went live since is recorded superseded, under its own actor, and nothing runs", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed", SERVICE_CATCH_UP: "true" };
    expect((await runCli(["pause"], { cwd: repo.clone, env })).code).toBe(0);
    const server = await startServer(repo.clone, env);
    repo.push({ "b.txt": "b\n" }, "second");
    expect(await (await push(server.url, "dave")).text()).toContain("[skipped] paused");
    await server.stop();
    // A forced deploy put the tip live while the server was down.
    expect((await runCli(["deploy", "--force"], { cwd: repo.clone, env })).code).toBe(0);
    expect((await runCli(["resume"], { cwd: repo.clone, env })).code).toBe(0);
    await using again = await startServer(repo.clone, env);
    await waitFor(() => !refusedPush(repo.clone, undefined), "the memory to be cleared");
    expect(again.stdout.text + again.stderr.text).toContain("the request of dave is superseded");
    const [superseded, ...more] = catchUps(repo.clone);
    expect(more).toHaveLength(0);
    expect(superseded).toMatchObject({ status: "superseded", actor: "dave" });
    expect(superseded!.reason).toContain("is live already");
    expect(superseded!.result.run.exitCode).toBeNull();
    // The superseded request is a line of the audit trail.
    const dropped = await waitFor(
      () => readAudit(auditDir(repo.clone)).find((l) => l.action === "catch-up"),
      "the catch-up's audit line",
    );
    expect(dropped).toMatchObject({ actor: "dave", outcome: "refused" });
    expect(dropped.reason).toContain("is live already");
  });

  test("without catchUp, nothing is deployed after a resume until the next push", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed" };
    await using server = await startServer(repo.clone, env);
    expect((await runCli(["pause"], { cwd: repo.clone, env })).code).toBe(0);
    repo.push({ "b.txt": "b\n" }, "second");
    expect(await (await push(server.url, "erin")).text()).toContain("[skipped] paused");
    expect(refusedPush(repo.clone, undefined)).toBeUndefined();
    expect((await runCli(["resume"], { cwd: repo.clone, env })).code).toBe(0);
    expect((await runCli(["logs"], { cwd: repo.clone, env })).code).toBe(0);
    expect(logFiles(repo.clone)).toEqual([]);
    expect(lastLine(await (await push(server.url, "erin")).text())).toBe("[done] ok=true exitCode=0");
  });
});
