/**
 * The memory clients without the secret can make the server hold: signed bodies are read before their
 * signature can be checked, so every such read is charged to one fixed budget shared by all requests; past
 * it a signed request is answered 503 at once, a body nobody needs whole is hashed as it streams in and not
 * kept, and a body that trickles is cut at a deadline. Real server processes, raw sockets, loopback only.
 */
import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  BODY_READ_DEADLINE_MS,
  STREAMED_BODY_CHARGE_BYTES,
  UNAUTHENTICATED_BODY_BUDGET_BYTES,
} from "../../src/http/body.ts";
import { defer, lastLine, logFiles, SECRET, startRecordingServer, waitFor } from "../_support/helpers.ts";
import { anonBytes, peakOf, rssBytes } from "../_support/hostile-fixtures.ts";
import { chunkFrame, connectRaw, dribble, exchange, type RawAnswer, upload } from "../_support/raw-http.ts";

const MB = 1024 * 1024;
const HOOK = "/hook";
const DONE_OK = "[done] ok=true exitCode=0";
const WRONG_SIGNATURE = `sha256=${"0".repeat(64)}`;

const sign = (body: Uint8Array) => `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;

const signedHead = (signature: string, length: number, extra = "") =>
  `POST ${HOOK} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Hub-Signature-256: ${signature}\r\nContent-Length: ${length}\r\n${extra}\r\n`;

/** A connection that sends a signed head and `sent` bytes of a body of `length`, then nothing: it holds a read open. */
const staller = (port: number, length: number, sent: number) =>
  connectRaw(port, [signedHead(WRONG_SIGNATURE, length), Buffer.alloc(sent, 0x7b)]);

/** A small signed request with a wrong signature: 401 once its body was read, 503 while the budget is spent. */
const probe = (port: number) => exchange(port, [signedHead(WRONG_SIGNATURE, 2, "Connection: close\r\n"), "{}"]);

/**
 * Sends a signed head and `length` bytes of body as fast as the server takes them, stopping as soon as an
 * answer is complete (a server that answers early does not read the rest).
 */
const flood = async (port: number, length: number): Promise<RawAnswer> =>
  (
    await upload(port, signedHead(WRONG_SIGNATURE, length), length, {
      pieceBytes: 256 * 1024,
      untilAnswered: true,
    })
  ).answer;

describe("unauthenticated body budget", () => {
  test("a signed body that no branch filter needs is verified as it streams in: a 20 MiB body with a valid signature deploys, and the server holds far less than the body", async () => {
    await using server = await startRecordingServer();
    const { ran } = server;
    const body = new Uint8Array(20 * MB).fill(0x20);
    body.set(new TextEncoder().encode('{"ref":"refs/heads/main"}'));
    // Warm-up: the first deploy's own allocations are not the body's.
    const warm = new Uint8Array(2).fill(0x7b);
    expect(
      lastLine(
        await (
          await fetch(`http://127.0.0.1:${server.port}${HOOK}`, {
            method: "POST",
            headers: { "x-hub-signature-256": sign(warm) },
            body: warm,
          })
        ).text(),
      ),
    ).toBe(DONE_OK);
    // Anonymous memory only: the compiled binary also maps in pages of its own executable on first use.
    const before = anonBytes(server.proc.pid);
    const peak = peakOf(() => anonBytes(server.proc.pid));
    const res = await fetch(`http://127.0.0.1:${server.port}${HOOK}`, {
      method: "POST",
      headers: { "x-hub-signature-256": sign(body), "content-type": "application/json" },
      body,
    });
    expect(res.status).toBe(200);
    expect(lastLine(await res.text())).toBe(DONE_OK);
    // Keeping the body would take 20 MiB at least (and a copy when joined).
    const held = peak() - before;
    expect(held).toBeLessThan(10 * MB);
    expect(await Bun.file(ran).text()).toContain("ran ");
  }, 60_000);

  test("past the budget, a signed request is answered 503 JSON with Retry-After at once, before its body; a plain-secret deploy still runs; once the reads end, signed requests are read again", async () => {
    await using server = await startRecordingServer();
    const { repo, ran } = server;
    const stallers: ReturnType<typeof staller>[] = [];
    await using _closing = defer(() => {
      for (const s of stallers) s.close();
    });
    // Each held read of a body that is not kept is charged STREAMED_BODY_CHARGE_BYTES.
    const fit = Math.floor(UNAUTHENTICATED_BODY_BUDGET_BYTES / STREAMED_BODY_CHARGE_BYTES);
    for (let i = 0; i < fit; i++) stallers.push(staller(server.port, 10 * MB, 1024));
    const refused = await waitFor(async () => {
      const answer = await probe(server.port);
      return answer.status === 503 ? answer : undefined;
    }, "a signed request to be refused while the budget is spent");
    expect(refused.headers["content-type"]).toContain("application/json");
    expect(refused.headers["retry-after"]).toMatch(/^\d+$/);
    expect(JSON.parse(refused.body.toString("utf8")).error).toBe("busy");
    // Answered before the body: a head whose body never comes gets the 503 too.
    const headOnly = await exchange(server.port, [signedHead(WRONG_SIGNATURE, 5 * MB, "Connection: close\r\n")], {
      timeoutMs: 10_000,
    });
    expect(headOnly.status).toBe(503);
    // No staller was answered: each read is still held.
    expect(stallers.map((s) => s.answer().status)).toEqual(stallers.map(() => 0));

    const res = await fetch(`http://127.0.0.1:${server.port}${HOOK}`, {
      method: "POST",
      headers: { "x-service-secret": SECRET },
    });
    expect(lastLine(await res.text())).toBe(DONE_OK);

    for (const s of stallers) s.close();
    const body = new TextEncoder().encode("{}");
    const signed = await waitFor(async () => {
      const r = await fetch(`http://127.0.0.1:${server.port}${HOOK}`, {
        method: "POST",
        headers: { "x-hub-signature-256": sign(body) },
        body,
      });
      return r.status === 200 ? r : void (await r.arrayBuffer());
    }, "a signed deploy once the held reads are gone");
    expect(lastLine(await signed.text())).toBe(DONE_OK);
    expect((await Bun.file(ran).text()).trim().split("\n")).toHaveLength(2);
    expect(logFiles(repo.clone)).toHaveLength(4);
  }, 60_000);

  test("a body kept whole for a branch filter is charged its declared length: a second 20 MiB signed body is refused 503 while the first is held", async () => {
    await using server = await startRecordingServer();
    const { repo } = server;
    writeFileSync(join(repo.clone, "service.yaml"), "branch: main\n");
    const stallers: ReturnType<typeof staller>[] = [];
    await using _closing = defer(() => {
      for (const s of stallers) s.close();
    });
    const refused = await waitFor(async () => {
      const s = staller(server.port, 20 * MB, 1024);
      stallers.push(s);
      await waitFor(() => s.socket.readyState === "open" || undefined, "the connection");
      const answer = await exchange(server.port, [signedHead(WRONG_SIGNATURE, 20 * MB, "Connection: close\r\n")], {
        timeoutMs: 10_000,
      });
      return answer.status === 503 ? answer : undefined;
    }, "a second large signed body to be refused");
    expect(JSON.parse(refused.body.toString("utf8")).error).toBe("busy");
    // The budget holds one such body, not two.
    expect(stallers.length).toBeLessThanOrEqual(2);
  }, 60_000);

  test("a kept signed body with no Content-Length (chunked, branch filter) is charged as it grows: while a 20 MiB body is held, it is refused 503 once it passes the rest of the budget", async () => {
    await using server = await startRecordingServer();
    const { repo } = server;
    writeFileSync(join(repo.clone, "service.yaml"), "branch: main\n");
    using held = staller(server.port, 20 * MB, 1024);
    const head = `POST ${HOOK} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Hub-Signature-256: ${WRONG_SIGNATURE}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const frame = chunkFrame(Buffer.alloc(256 * 1024, 0x20));
    // Only once the 20 MiB read is charged does the budget have less than 16 MiB left.
    await waitFor(
      async () => (await probe(server.port)).status === 401 && held.socket.readyState === "open",
      "the held read",
    );
    const growing = connectRaw(server.port, [head, ...Array.from({ length: 64 }, () => frame)]);
    const answer = await waitFor(() => growing.complete(), "the answer to the chunked body");
    growing.close();
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body.toString("utf8")).error).toBe("busy");
    expect(logFiles(repo.clone)).toEqual([]);
  }, 60_000);

  test(
    "a signed body that trickles in is cut at the read deadline: 408 JSON, nothing deploys",
    async () => {
      await using server = await startRecordingServer();
      const { repo } = server;
      using slow = dribble(server.port, signedHead(WRONG_SIGNATURE, 100_000), "{".repeat(10_000), 200);
      const answer = await waitFor(
        () => {
          const a = slow.answer();
          return a.status > 0 ? a : undefined;
        },
        "the answer to a trickling body",
        BODY_READ_DEADLINE_MS + 15_000,
      );
      expect(answer.status).toBe(408);
      expect(answer.headers["content-type"]).toContain("application/json");
      expect(JSON.parse(answer.body.toString("utf8")).error).toBe("request timeout");
      expect(slow.sent()).toBeLessThan(10_000);
      expect(logFiles(repo.clone)).toEqual([]);
    },
    BODY_READ_DEADLINE_MS + 30_000,
  );

  test("60 concurrent 25 MiB bodies with a wrong signature: every one is answered 401 or 503 in JSON, the server's RSS stays within 64 MB of idle, and an authorized deploy during the flood ends [done] ok=true", async () => {
    await using server = await startRecordingServer();
    const { repo } = server;
    // Warm-up: a first deploy and a first refused signed body, so the baseline is not the cold server.
    expect(
      lastLine(
        await (
          await fetch(`http://127.0.0.1:${server.port}${HOOK}`, {
            method: "POST",
            headers: { "x-service-secret": SECRET },
          })
        ).text(),
      ),
    ).toBe(DONE_OK);
    expect((await probe(server.port)).status).toBe(401);
    const before = rssBytes(server.proc.pid);
    const peak = peakOf(() => rssBytes(server.proc.pid));
    const attack = Promise.all(Array.from({ length: 60 }, () => flood(server.port, 25 * MB)));
    const res = await fetch(`http://127.0.0.1:${server.port}${HOOK}`, {
      method: "POST",
      headers: { "x-service-secret": SECRET },
    });
    expect(lastLine(await res.text())).toBe(DONE_OK);
    const answers = await attack;
    const grown = peak() - before;
    expect(answers.map((a) => a.status).filter((s) => s !== 401 && s !== 503)).toEqual([]);
    for (const a of answers) expect(a.headers["content-type"]).toContain("application/json");
    expect(grown).toBeLessThan(64 * MB);
    expect(logFiles(repo.clone)).toHaveLength(4);
  }, 120_000);
});
