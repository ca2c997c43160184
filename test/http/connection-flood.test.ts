/**
 * A flood of connections that never send a request must not take the descriptors a running deploy needs: the
 * ports hold a bounded number of connections, in all and per client address, and close the excess at once.
 * The server runs with a small descriptor limit (ulimit -n), so a bounded flood on loopback reaches it.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { makeGate, StreamReader } from "../_support/gate.ts";
import { lastLine, makeRepo, post, SECRET, startServer, waitFor } from "../_support/helpers.ts";

const FD_LIMIT = 512;
/** More than the server's whole descriptor limit: without a bound the server runs out of descriptors. */
const FLOOD = FD_LIMIT + 200;

/** How many descriptors process `pid` has open. */
const descriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

/**
 * Opens one raw connection that sends nothing; resolves once it is connected or closed, or after 3 s (a server
 * that accepts nothing more leaves the connect pending in the kernel's backlog).
 */
function idle(port: number): Promise<{ socket: Socket; closed: () => boolean }> {
  return new Promise((resolve) => {
    let closed = false;
    const socket = connect({ port, host: "127.0.0.1" });
    const done = () => resolve({ socket, closed: () => closed });
    const timer = setTimeout(done, 3000);
    socket.on("error", () => {});
    // Read (and drop) what comes, so the server's close is seen.
    socket.resume();
    socket.on("close", () => {
      closed = true;
      clearTimeout(timer);
      done();
    });
    socket.once("connect", () => {
      clearTimeout(timer);
      done();
    });
  });
}

/** A wrong-secret POST sent on a raw connection from `localAddress`: the status line it gets ("" when closed). */
function wrongSecretFrom(port: number, localAddress: string): Promise<string> {
  return new Promise((resolve) => {
    let answer = "";
    const socket = connect({ port, host: "127.0.0.1", localAddress }, () =>
      socket.write(
        "POST / HTTP/1.1\r\nHost: x\r\nX-Service-Secret: wrong\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
      ),
    );
    socket.setTimeout(15_000, () => socket.destroy());
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
    });
    socket.on("error", () => {});
    socket.on("close", () => resolve(answer.split("\r\n")[0] ?? ""));
  });
}

describe('connection floods (docs/reliability.md "Faults and what the service does")', () => {
  test("idle connections past the descriptor limit while a deploy runs: the excess is closed at once, the deploy ends ok, other clients are served", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    // The lines after the gate start new processes: each needs descriptors (pipes) while the flood holds its own.
    await using server = await startServer(
      repo.clone,
      {
        SERVICE_SECRET: SECRET,
        // Bounded on loopback too (a port on any other address is bounded by default).
        SERVICE_HOSTNAME: "127.0.0.1",
        SERVICE_BOUND_CONNECTIONS: "true",
        SERVICE_RUN_SCRIPT: `${gate.script}\necho after the flood\ngit status --short`,
        ...gate.env,
      },
      [],
      { ulimit: FD_LIMIT },
    );
    const reader = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => gate.starts().length === 1, "the deploy to reach its gate");

    const flood: { socket: Socket; closed: () => boolean }[] = [];
    try {
      for (let i = 0; i < FLOOD; i += 50)
        flood.push(...(await Promise.all(Array.from({ length: Math.min(50, FLOOD - i) }, () => idle(server.port)))));
      // Once the server has taken the flood in (it is out of descriptors, or it closed the excess), the rest of
      // the deploy runs while the flood holds every connection the server kept.
      const closed = () => flood.filter((c) => c.closed()).length;
      await waitFor(
        () => descriptors(server.proc.pid) >= FD_LIMIT - 2 || closed() >= FLOOD - FD_LIMIT,
        "the flood to land",
      );
      gate.open();
      const text = await reader.done;
      expect(text).toContain("after the flood");
      expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
      // The excess was closed by the server (this side still holds its sockets), not left to an idle timeout.
      expect(closed()).toBeGreaterThanOrEqual(FLOOD - FD_LIMIT);
      // Another client address is not locked out by this one's flood.
      expect(await wrongSecretFrom(server.port, "127.0.0.2")).toBe("HTTP/1.1 401 Unauthorized");
    } finally {
      gate.open();
      for (const c of flood) c.socket.destroy();
    }
  }, 60_000);

  test("on loopback the port is the HTTP server itself (behind a proxy): a flood past the bounds is held, one descriptor each", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_HOSTNAME: "127.0.0.1" }, [], {
      ulimit: FD_LIMIT,
    });
    const before = descriptors(server.proc.pid);
    // More than one address may hold on a bounded port at this limit (connectionLimits(3, 512).perClient = 42).
    const count = 60;
    const flood: { socket: Socket; closed: () => boolean }[] = [];
    try {
      flood.push(...(await Promise.all(Array.from({ length: count }, () => idle(server.port)))));
      await waitFor(() => descriptors(server.proc.pid) >= before + count, "the server to accept the flood");
      expect(flood.filter((c) => c.closed()).length).toBe(0);
      // Not relayed: a relayed connection takes three descriptors.
      expect(descriptors(server.proc.pid)).toBeLessThan(before + 2 * count);
      expect(await wrongSecretFrom(server.port, "127.0.0.1")).toBe("HTTP/1.1 401 Unauthorized");
    } finally {
      for (const c of flood) c.socket.destroy();
    }
  }, 60_000);
});
