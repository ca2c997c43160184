/**
 * The live text stream of a deploy (docs/http.md "The stream"; the Bun facts of docs/architecture.md).
 * Liveness is decided by content order and by files the script writes, never by timing: the script waits for a
 * "go" file the test writes only after it has read the first line, so a buffered stream could not show
 * that line while the script still runs.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connectRaw, parseAnswer } from "../_support/raw-http.ts";
import {
  baseEnv,
  defer,
  lastLine,
  makeRepo,
  post,
  readJson,
  runProcess,
  ROOT,
  SECRET,
  startServer,
  waitFor,
} from "../_support/helpers.ts";

/** A script line that waits (at most 10 s, so a broken test cannot hang the deploy) until `file` exists. */
const waitForFile = (file: string) =>
  `sh -c 'i=0; while [ ! -f ${file} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done'`;

/** Reads a fetch body incrementally; `until` resolves once the text read so far matches. */
function incrementalReader(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const state = {
    text: "",
    async until(check: (text: string) => boolean, what: string): Promise<string> {
      while (!check(state.text)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the stream ended before ${what}; got:\n${state.text}`);
        state.text += decoder.decode(value, { stream: true });
      }
      return state.text;
    },
    async rest(): Promise<string> {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return state.text;
        state.text += decoder.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel().catch(() => {}),
  };
  return state;
}

/** A raw HTTP/1.1 POST on a socket we control, so the test decides when (and whether) to read. */
const rawPost = (port: number, options: { paused?: boolean } = {}) =>
  connectRaw(
    port,
    [
      `POST / HTTP/1.1\r\nHost: localhost:${port}\r\nX-Service-Secret: ${SECRET}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    ],
    options,
  );

/** The body of a raw HTTP/1.1 response with chunked transfer encoding. */
function chunkedBody(raw: Buffer): string {
  const answer = parseAnswer(raw);
  if (answer.status === 0) throw new Error("no response headers");
  expect(answer.headers["transfer-encoding"]?.toLowerCase()).toContain("chunked");
  return answer.body.toString("utf8");
}

/** The deploy's .json log record once it says done. */
async function doneRecord(cwd: string): Promise<any> {
  const dir = join(cwd, ".service", "logs");
  return waitFor(() => {
    if (!existsSync(dir)) return undefined;
    const file = readdirSync(dir).find((name) => name.endsWith(".json"));
    if (!file) return undefined;
    const record = readJson(join(dir, file));
    return record.status === "done" ? record : undefined;
  }, "the .json log to say done");
}

describe("live streaming (output streamed as plain text, read with curl -N)", () => {
  test("the first lines arrive while the script still runs; [done] comes last", async () => {
    const repo = makeRepo();
    const script = ["echo first", waitForFile("go"), "echo second", "touch finished.marker"].join("\n");
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: script });
    await using _cleanup = defer(() => writeFileSync(join(repo.clone, "go"), ""));
    const res = await post(server.url, { secret: SECRET });
    expect(res.status).toBe(200);
    const stream = incrementalReader(res.body!);
    const early = await stream.until((text) => text.includes("first\n"), 'the line "first"');
    // The script is still blocked on the go file: nothing after "first" can have been produced yet.
    expect(early).toStartWith("[deploy] ");
    expect(early).not.toContain("second");
    expect(early).not.toContain("[done]");
    expect(existsSync(join(repo.clone, "finished.marker"))).toBe(false);

    writeFileSync(join(repo.clone, "go"), "");
    const text = await stream.rest();
    expect(text.indexOf("second")).toBeGreaterThan(text.indexOf("first"));
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(existsSync(join(repo.clone, "finished.marker"))).toBe(true);
  }, 20_000);

  test("a script silent longer than Bun's 10 s idle timeout keeps its stream, which ends with [done] ok=true", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "sleep 12\necho after-the-silence",
      SERVICE_HEARTBEAT_MS: "600000",
    });
    const res = await post(server.url, { secret: SECRET });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain("[heartbeat]");
    expect(text).toContain("after-the-silence\n");
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
  }, 30_000);

  test("during a silence a [heartbeat] line is sent every SERVICE_HEARTBEAT_MS, before [done]", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "sleep 3",
      SERVICE_HEARTBEAT_MS: "500",
    });
    const res = await post(server.url, { secret: SECRET });
    const lines = (await res.text()).trimEnd().split("\n");
    const heartbeat = lines.findIndex((line) => line.startsWith("[heartbeat]"));
    expect(heartbeat).toBeGreaterThan(0);
    expect(heartbeat).toBeLessThan(lines.length - 1);
    expect(lines[lines.length - 1]).toBe("[done] ok=true exitCode=0");
  });
});

describe("stream lifetime", () => {
  test("a streaming response built but never sent (a request refused after all) leaves no heartbeat timer behind", async () => {
    // A timer left ticking would keep this process alive: it must exit on its own.
    const script = `import { streamingResponse } from ${JSON.stringify(join(ROOT, "src/http/response.ts"))};\nstreamingResponse(100);\n`;
    const { code } = await runProcess([process.execPath, "-e", script], {
      cwd: ROOT,
      env: baseEnv(),
      timeoutMs: 10_000,
    });
    expect(code).toBe(0);
  }, 15_000);
});

describe("client independence (a sink can go away without touching the run)", () => {
  const script = [
    "echo first",
    waitForFile("go"),
    "sleep 0.5",
    "sh -c 'for i in 1 2 3 4 5; do echo after-disconnect-$i; done'",
    "touch finished.marker",
  ].join("\n");

  const expectCompleted = async (cwd: string) => {
    const record = await doneRecord(cwd);
    expect(record.result.ok).toBe(true);
    expect(record.result.run.exitCode).toBe(0);
    expect(record.result.run.stdout).toContain("after-disconnect-5\n");
    expect(existsSync(join(cwd, "finished.marker"))).toBe(true);
    const log = readFileSync(record.result.log.log, "utf8");
    expect(log).toContain("after-disconnect-5\n");
    expect(lastLine(log)).toBe("[done] ok=true exitCode=0");
  };

  test("a client that aborts its fetch mid-stream does not stop the deploy; the logs end with done", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: script });
    const abort = new AbortController();
    await using _cleanup = defer(() => {
      abort.abort();
      writeFileSync(join(repo.clone, "go"), "");
    });
    const res = await fetch(server.url, {
      method: "POST",
      headers: { "x-service-secret": SECRET },
      signal: abort.signal,
    });
    const stream = incrementalReader(res.body!);
    await stream.until((text) => text.includes("first\n"), 'the line "first"');
    abort.abort();
    await stream.cancel();
    writeFileSync(join(repo.clone, "go"), "");
    await expectCompleted(repo.clone);
  }, 20_000);

  test("a client whose socket closes after the first line does not stop the deploy; the logs end with done", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: script });
    await using _cleanup = defer(() => writeFileSync(join(repo.clone, "go"), ""));
    using client = rawPost(server.port);
    await waitFor(() => client.received().includes("first\n"), 'the line "first" on the socket');
    client.socket.destroy();
    await client.closed;
    writeFileSync(join(repo.clone, "go"), "");
    await expectCompleted(repo.clone);
  }, 20_000);

  test("a client that never reads does not block a deploy printing 20 MB; it later gets a skip mark and [done]", async () => {
    const repo = makeRepo();
    const script = [
      "sh -c 'yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 20000000'",
      "touch finished.marker",
    ].join("\n");
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: script,
      SERVICE_MAX_LOG_BYTES: String(64 * 1024 * 1024),
    });
    using client = rawPost(server.port, { paused: true });
    const record = await doneRecord(repo.clone);
    // The deploy is over while the client has not taken a single byte.
    expect(client.bytes()).toBe(0);
    expect(record.result.ok).toBe(true);
    expect(existsSync(join(repo.clone, "finished.marker"))).toBe(true);
    expect(statSync(record.result.log.log).size).toBeGreaterThan(20_000_000);

    client.socket.resume();
    await client.closed;
    const body = chunkedBody(client.received());
    expect(body).toStartWith("[deploy] ");
    expect(body).toMatch(/^\[stream\] skipped \d+ bytes/m);
    expect(lastLine(body)).toBe("[done] ok=true exitCode=0");
  }, 30_000);
});
