/**
 * Nothing acknowledged is lost (docs/deploy-control.md "Requests"): a request is on the disk before it is answered, so
 * the requests a server killed with -9 had queued are replayed at its next start, without catchUp or polling: the
 * newest runs with trigger `recovered` under its own actor, the older one is recorded `superseded` by it, and
 * `service logs` lists both.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { startGated } from "../_support/gate.ts";
import { hasEnded, post, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";
import { deployRecords } from "../_support/webhook-fixtures.ts";

/** A push from `pusher`, answered at once with its id (the deploy goes on without the client). */
const ack = async (url: string, pusher: string) =>
  (await (
    await post(`${url}/?ack=1&format=json`, {
      secret: SECRET,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ pusher: { name: pusher } }),
    })
  ).json()) as { id: string; position: number };

describe("recovery of acknowledged requests", () => {
  test("a deploy that starts at once is kept by its running record, never a request file; one that waits has its file until it starts", async () => {
    await using gated = await startGated();
    const { repo, gate, server } = gated;
    const requests = join(repo.clone, ".service", "requests");
    const first = await ack(server.url, "alice");
    await waitFor(() => gate.starts().includes(first.id), "the first deploy to run");
    expect(existsSync(requests)).toBe(false);
    expect(deployRecords(repo.clone).find((r) => r.id === first.id)?.status).toBe("running");
    const waiting = await ack(server.url, "bob");
    expect(waiting.position).toBe(1);
    expect(readdirSync(requests)).toEqual([`${waiting.id}.json`]);
    gate.open();
    await waitFor(
      () => deployRecords(repo.clone).filter((r) => hasEnded(r.status)).length === 2,
      "both deploys to end",
    );
    expect(readdirSync(requests)).toEqual([]);
  });

  test("kill -9 with two requests queued: at the next start the newest runs (recovered), the other is superseded; service logs lists both", async () => {
    await using gated = await startGated();
    const { repo, gate, server, env } = gated;
    const first = await ack(server.url, "alice");
    await waitFor(() => gate.starts().includes(first.id), "the first deploy to hold the queue");
    const older = await ack(server.url, "bob");
    const newer = await ack(server.url, "carol");
    expect([older.position, newer.position]).toEqual([1, 2]);
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    gate.open();
    const pushed = repo.push({ "b.txt": "b\n" }, "pushed while it was down");

    await using _again = await startServer(repo.clone, env);
    const records = await waitFor(() => {
      const ended = deployRecords(repo.clone).filter((r) => r.trigger === "recovered" && hasEnded(r.status));
      return ended.length === 2 ? ended : undefined;
    }, "both requests' records");
    const of = (id: string) => records.find((r) => r.id === id);
    expect(of(newer.id)).toMatchObject({ status: "done", actor: "carol" });
    expect(of(newer.id).result.ok).toBe(true);
    expect(of(older.id)).toMatchObject({ status: "superseded", actor: "bob" });
    expect(of(older.id).reason).toBe(`superseded by the newer request ${newer.id.slice(0, 8)} of carol`);
    expect(repo.head()).toBe(pushed);
    // The one that was running is interrupted, not replayed: it ran.
    expect(deployRecords(repo.clone).find((r) => r.id === first.id)?.status).toBe("interrupted");

    const listed = await runCli(["logs"], { cwd: repo.clone, env });
    expect(listed.code).toBe(0);
    for (const id of [older.id, newer.id]) expect(listed.stdout).toContain(id.slice(0, 8));
    expect(listed.stdout).toContain("superseded");
    const onlySuperseded = await runCli(["logs", "--outcome", "superseded"], { cwd: repo.clone, env });
    const ids = onlySuperseded.stdout
      .trim()
      .split("\n")
      .slice(1)
      .map((row) => row.split(/\s+/)[2]);
    expect(ids).toEqual([older.id.slice(0, 8)]);
  }, 60_000);
});
