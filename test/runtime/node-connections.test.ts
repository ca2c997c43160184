/**
 * The connection bounds under Node.js (node:http): the runtime seam built for Node and run by `node` with a
 * descriptor limit of 1024, so one address may hold 384 connections (connectionLimits(1, 1024)).
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { connectionLimits } from "../../src/runtime/connections.ts";
import { ROOT, tempDir } from "../_support/helpers.ts";

const SCRIPT = `
import { connect } from "node:net";
import { runtime } from "./seam.js";
const listener = await runtime.serve({
  port: 0, hostname: "127.0.0.1", bounded: process.argv[3] === "bounded", idleTimeoutSeconds: 30, maxRequestBodySize: 1024,
  fetch: () => new Response("{}", { status: 401 }), error: () => new Response("", { status: 500 }),
});
/** Opens a connection from \`localAddress\`; resolves with the first bytes it gets (or "" once idle for a while). */
const open = (localAddress, send) => new Promise((resolve) => {
  let text = "";
  const socket = connect({ port: listener.port, host: "127.0.0.1", localAddress }, () => send && socket.write(send));
  socket.on("data", (chunk) => { text += chunk; });
  socket.on("error", () => {});
  socket.on("close", () => resolve({ text, socket }));
  setTimeout(() => resolve({ text, socket }), 3000);
});
const flood = await Promise.all(Array.from({ length: Number(process.argv[2]) }, () => open("127.0.0.1")));
const refused = flood.filter((c) => c.text.startsWith("HTTP/1.1 503")).length;
const other = await open("127.0.0.2", "POST / HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n");
console.log(JSON.stringify({ refused, body: flood.find((c) => c.text)?.text.split("\\r\\n\\r\\n")[1] ?? "", other: other.text.split("\\r\\n")[0] }));
process.exit(0);
`;

describe('connection bounds under Node.js (docs/reliability.md "Faults and what the service does")', () => {
  /** The seam built for Node, run by `node` with a descriptor limit of 1024: `flood.mjs <connections> <bounded>`. */
  async function floodUnderNode(connections: number, bounded: "bounded" | "unbounded") {
    const dir = tempDir("service-node-seam-");
    const built = await Bun.build({
      entrypoints: [join(ROOT, "src/runtime/node.ts")],
      target: "node",
      outdir: dir,
      naming: "seam.js",
    });
    expect(built.success).toBe(true);
    writeFileSync(join(dir, "flood.mjs"), SCRIPT);
    const run = Bun.spawnSync(["prlimit", "--nofile=1024:1024", "node", "flood.mjs", String(connections), bounded], {
      cwd: dir,
      stdout: "pipe",
      stderr: "pipe",
      timeout: 30_000,
    });
    expect(run.stderr.toString()).toBe("");
    return JSON.parse(run.stdout.toString()) as { refused: number; body: string; other: string };
  }

  test("past the per-address bound a connection gets 503 JSON and is closed; another address is still served", async () => {
    const { perClient } = connectionLimits(1, 1024);
    const over = 20;
    const result = await floodUnderNode(perClient + over, "bounded");
    expect(result.refused).toBe(over);
    expect(JSON.parse(result.body).error).toBe("too many connections");
    expect(result.other).toBe("HTTP/1.1 401 Unauthorized");
  }, 60_000);

  test("an unbounded port (loopback behind a proxy) counts nothing: the same flood is held, not refused", async () => {
    const { perClient } = connectionLimits(1, 1024);
    const result = await floodUnderNode(perClient + 20, "unbounded");
    expect(result.refused).toBe(0);
    expect(result.other).toBe("HTTP/1.1 401 Unauthorized");
  }, 60_000);
});
