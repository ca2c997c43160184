import { describe, expect, test } from "bun:test";
import { StreamReader, startGated } from "../_support/gate.ts";
import { lastLine, logFiles, post, readJson, runCli, SECRET, waitFor } from "../_support/helpers.ts";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { deliveryKey } from "../../src/http/dedupe.ts";

const DONE_OK = "[done] ok=true exitCode=0";

/** The delivery ids the server keeps, each with the deploy serving it (none yet: empty). */
function deliveries(clone: string): Record<string, { deploy: string }> {
  const file = join(clone, ".service", "deliveries", "default.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
}

describe("queuePolicy: latest", () => {
  test("a request arriving while a deploy of the same app waits joins it: one deploy, one log pair, every client gets its output and [done]", async () => {
    // Delivery ids kept on disk (dedupeDeliveries) say when a JSON request, silent until the end, has joined.
    await using gated = await startGated({ SERVICE_QUEUE_POLICY: "latest", SERVICE_DEDUPE_DELIVERIES: "1" });
    const { repo, gate, server } = gated;
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    const waiting = new StreamReader(
      await post(server.url, { secret: SECRET, headers: { "x-github-event": "push", "x-github-delivery": "d-1" } }),
    );
    await waitFor(() => waiting.text.includes("[queued]"), "the second request to queue");
    const joiners: StreamReader[] = [];
    for (let i = 2; i <= 4; i++) {
      const reader = new StreamReader(
        await post(server.url, {
          secret: SECRET,
          headers: { "x-github-event": "push", "x-github-delivery": `d-${i}` },
        }),
      );
      await waitFor(() => reader.text.includes("\n"), `request ${i} answered`);
      joiners.push(reader);
    }
    // A JSON request joins too, and gets the joined deploy's result; the gate opens only once it has joined.
    const json = post(`${server.url}?format=json`, {
      secret: SECRET,
      headers: { "x-github-event": "push", "x-github-delivery": "d-5" },
    });
    const waitingId = deliveries(repo.clone)[deliveryKey("d-1")]!.deploy;
    await waitFor(() => deliveries(repo.clone)[deliveryKey("d-5")]?.deploy === waitingId, "the JSON request to join");
    for (const reader of joiners) expect(reader.text.split("\n")[0]).toBe("[queued] waiting; position=1");
    gate.open();
    expect(lastLine(await first.done)).toBe(DONE_OK);
    const text = await waiting.done;
    expect(lastLine(text)).toBe(DONE_OK);
    for (const reader of joiners) {
      const body = await reader.done;
      // The same deploy's whole output: everything after the `[queued]` line is the same.
      expect(body.slice(body.indexOf("\n") + 1)).toBe(text.slice(text.indexOf("\n") + 1));
    }
    const result = await (await json).json();
    expect(result).toMatchObject({ ok: true, id: waiting.id() });
    // Two deploys ran, each with its log pair; the second lists the deliveries it served.
    expect(gate.starts()).toEqual([first.id()!, waiting.id()!]);
    expect(logFiles(repo.clone)).toHaveLength(4);
    const record = readJson(
      join(repo.clone, ".service", "logs", logFiles(repo.clone).find((f) => f.endsWith(`_${waiting.id()}.json`))!),
    );
    expect(record.served).toMatchObject({ requests: 5, deliveries: ["d-1", "d-2", "d-3", "d-4", "d-5"] });
    // Each request it replaced, by who asked: no request is lost in a count.
    expect(record.served.replaces.map((r: { actor: string; delivery: string }) => [r.actor, r.delivery])).toEqual(
      ["d-2", "d-3", "d-4", "d-5"].map((d) => ["webhook@127.0.0.1", d]),
    );
  });

  test("fifo (the default) queues every request; a bad queuePolicy is refused at start with the key named", async () => {
    await using gated = await startGated();
    const { repo, gate, server } = gated;
    const readers = [new StreamReader(await post(server.url, { secret: SECRET }))];
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    for (let i = 1; i <= 2; i++) {
      const reader = new StreamReader(await post(server.url, { secret: SECRET }));
      await waitFor(() => reader.text.includes("\n"), `request ${i} answered`);
      readers.push(reader);
    }
    expect(readers[2]!.text.split("\n")[0]).toBe("[queued] waiting; position=2");
    gate.open();
    for (const reader of readers) expect(lastLine(await reader.done)).toBe(DONE_OK);
    expect(gate.starts()).toHaveLength(3);
    await server.stop();
    const bad = await runCli(["check"], { cwd: repo.clone, env: { SERVICE_QUEUE_POLICY: "lifo" } });
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).toContain("SERVICE_QUEUE_POLICY");
    expect(bad.stdout + bad.stderr).toContain('"fifo" or "latest"');
  });

  test("a cancelled joined deploy ends every client that joined it", async () => {
    await using gated = await startGated({ SERVICE_QUEUE_POLICY: "latest" });
    const { repo, gate, env, server } = gated;
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.lines().length === 1, "the first deploy to start");
    const a = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => a.text.includes("[queued]"), "the second request to queue");
    const b = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => b.text.includes("[queued]"), "the third request to join");
    const [id] = readdirSync(join(repo.clone, ".service", "requests"));
    expect((await runCli(["cancel", id!.replace(/\.json$/, "")], { cwd: repo.clone, env })).code).toBe(0);
    for (const reader of [a, b]) expect(lastLine(await reader.done)).toBe("[done] ok=false exitCode=null");
    gate.open();
    expect(lastLine(await first.done)).toBe(DONE_OK);
  });
});
