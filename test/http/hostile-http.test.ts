/**
 * Hostile HTTP input (docs/reliability.md "Faults and what the service does"): whatever a client sends, the server
 * answers only with the statuses it documents (200, 401, 404, 408, 413, 429, 503; and Bun's own 431 for a request
 * head over 16 KiB), never with a 5xx, never deploys without the secret, and writes no log file for a refused
 * request; bodies over the limit are refused without being kept; slow and flooding clients do not stop an
 * authorized deploy. Real server processes, loopback only, raw sockets where fetch would tidy the request up. No
 * timing is asserted: conditions are waited for, counts and contents are checked.
 */
import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { makeGate, StreamReader } from "../_support/gate.ts";
import {
  defer,
  lastLine,
  logFiles,
  makeRepo,
  readJson,
  SECRET,
  startRecordingServer,
  startServer,
  tempDir,
  waitFor,
} from "../_support/helpers.ts";
import { peakOf, rssBytes } from "../_support/hostile-fixtures.ts";
import { chunkedBytes, dribble, exchange, type RawAnswer, upload } from "../_support/raw-http.ts";
import { FAILURE_BURST } from "../../src/http/throttle.ts";

const DONE_OK = "[done] ok=true exitCode=0";
const HOOK = "/hook";
const LIMIT = 4096;
/** Bun's own limit on a request head (request line and headers): past it Bun answers 431 itself. */
const HEAD_LIMIT = 16 * 1024;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

const hmac = (algorithm: "sha256" | "sha1", secret: string, body: Uint8Array) =>
  createHmac(algorithm, secret).update(body).digest("hex");

/** The ids of the deploys whose run script ran (the script appends `ran <id>` to `file`). */
function ranIds(file: string): string[] {
  return existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(" ")[1]!)
    : [];
}

/** The deploy ids that have log files, each checked to have both of its files. */
function loggedIds(cwd: string): string[] {
  const files = logFiles(cwd);
  const ids = [...new Set(files.map((f) => UUID.exec(f)?.[0] ?? f))];
  for (const id of ids) {
    const mine = files.filter((f) => f.includes(id));
    expect({ id, files: mine.map((f) => f.slice(f.lastIndexOf("."))).sort() }).toEqual({
      id,
      files: [".json", ".log"],
    });
  }
  return ids.sort();
}

/** The status in the .json record of deploy `id`; undefined while it has none. */
function recordStatus(cwd: string, id: string): string | undefined {
  const file = logFiles(cwd).find((f) => f.includes(id) && f.endsWith(".json"));
  try {
    return file ? readJson(join(cwd, ".service", "logs", file)).status : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------------
// The request model: what a generated request is, and what the server must answer to it.

/** A credential header: how its value relates to the secret decides the verdict. */
interface Credential {
  name: string;
  value: string;
  /** valid: carries the secret; invalid: present but wrong (refuses the request); neutral: not a credential. */
  verdict: "valid" | "invalid" | "neutral";
  what: string;
}

interface Signature {
  name: string;
  kind: "valid" | "wrong" | "empty";
  /** sha256=<hex>, SHA256=<HEX>, bare hex (Gitea), sha1=<hex> (GitHub's legacy header). */
  style: "sha256" | "SHA256" | "bare" | "sha1";
}

interface HostileRequest {
  method: string;
  path: string;
  query: string;
  host: string;
  credentials: Credential[];
  /** X-Service-Secret sent twice (a client or proxy that repeats it): the joined value is never the secret. */
  repeatSecret: boolean;
  signature?: Signature;
  extra: [string, string][];
  body: Uint8Array;
  framing: "length" | "chunked";
  chunk: number;
}

/** The name in a random casing: header names are case-insensitive. */
const casing = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((flags) => [...name].map((c, i) => (flags[i] ? c.toUpperCase() : c.toLowerCase())).join(""));

/** Visible ASCII, spaces and tabs inside, as a header value may carry (obs-text aside). */
const headerText = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });

/** The secret one edit away: a character changed, added or removed, or its case flipped. */
const nearMiss = fc
  .tuple(
    fc.constantFrom("change", "add", "remove", "case", "prefix", "suffix"),
    fc.nat(SECRET.length - 1),
    fc.constantFrom(..."aZ09-_. !~"),
  )
  .map(([edit, at, ch]) => {
    switch (edit) {
      case "change":
        return SECRET.slice(0, at) + (SECRET[at] === ch ? "x" : ch === " " ? "y" : ch) + SECRET.slice(at + 1);
      case "add":
        return SECRET.slice(0, at) + (ch === " " ? "q" : ch) + SECRET.slice(at);
      case "remove":
        return SECRET.slice(0, at) + SECRET.slice(at + 1);
      case "case":
        return SECRET.toUpperCase();
      case "prefix":
        return `${ch === " " ? "q" : ch}${SECRET}`;
      default:
        return `${SECRET}${ch === " " ? "q" : ch}`;
    }
  })
  .filter((value) => value.trim() !== SECRET);

/** Values of X-Service-Secret / X-Gitlab-Token. Surrounding whitespace is not part of a header value (RFC 9110). */
const tokenValue: fc.Arbitrary<{ value: string; verdict: Credential["verdict"]; what: string }> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ value: SECRET, verdict: "valid" as const, what: "the secret" }) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(" ", "\t", "  \t")
      .map((ws) => ({ value: `${ws}${SECRET}${ws}`, verdict: "valid" as const, what: "the secret padded" })),
  },
  { weight: 4, arbitrary: nearMiss.map((value) => ({ value, verdict: "invalid" as const, what: "a near miss" })) },
  {
    weight: 2,
    arbitrary: fc.constantFrom("", " ", "\t").map((value) => ({ value, verdict: "invalid" as const, what: "empty" })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        `${SECRET.slice(0, 8)} ${SECRET.slice(8)}`,
        `${SECRET}, ${SECRET}`,
        `"${SECRET}"`,
        `Bearer ${SECRET}`,
        `${SECRET}\u00e9`,
      )
      .map((value) => ({ value, verdict: "invalid" as const, what: "the secret mangled" })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(4 * 1024, 64 * 1024).map((n) => ({
      value: SECRET.repeat(Math.ceil(n / SECRET.length)).slice(0, n),
      verdict: "invalid" as const,
      what: `${n} bytes`,
    })),
  },
  {
    weight: 2,
    arbitrary: headerText(40)
      .filter((v) => v.trim() !== SECRET)
      .map((value) => ({ value, verdict: "invalid" as const, what: "random" })),
  },
);

/**
 * Values of Authorization. Only the Bearer scheme carries the secret (its name in any case, then whitespace);
 * another scheme (Basic from a proxy, a scheme glued to the secret) is not a credential for the service.
 */
const authorizationValue: fc.Arbitrary<{ value: string; verdict: Credential["verdict"]; what: string }> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.tuple(casing("Bearer"), fc.constantFrom(" ", "  ", "\t", " \t ")).map(([scheme, ws]) => ({
      value: `${scheme}${ws}${SECRET}`,
      verdict: "valid" as const,
      what: "Bearer <secret>",
    })),
  },
  {
    weight: 3,
    arbitrary: nearMiss.map((miss) => ({
      value: `Bearer ${miss}`,
      verdict: "invalid" as const,
      what: "Bearer <near miss>",
    })),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom("Bearer", "Bearer ", "bearer\t", "").map((value) => ({
      value,
      verdict: value === "" ? ("neutral" as const) : ("invalid" as const),
      what: "Bearer, nothing after",
    })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(`Bearer ${SECRET} extra`, `Bearer ${SECRET}, Bearer ${SECRET}`, `Bearer "${SECRET}"`)
      .map((value) => ({ value, verdict: "invalid" as const, what: "Bearer <secret + more>" })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        `Bearer${SECRET}`,
        SECRET,
        `Basic ${Buffer.from(`user:${SECRET}`).toString("base64")}`,
        `Token ${SECRET}`,
        `Bearer-${SECRET}`,
      )
      .map((value) => ({ value, verdict: "neutral" as const, what: "another scheme" })),
  },
  {
    weight: 1,
    arbitrary: fc.constant({
      value: `Bearer ${"x".repeat(64 * 1024)}`,
      verdict: "invalid" as const,
      what: "Bearer <64 KiB>",
    }),
  },
);

const credential: fc.Arbitrary<Credential> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(casing("X-Service-Secret"), tokenValue).map(([name, v]) => ({ name, ...v })) },
  { weight: 2, arbitrary: fc.tuple(casing("Authorization"), authorizationValue).map(([name, v]) => ({ name, ...v })) },
  { weight: 1, arbitrary: fc.tuple(casing("X-Gitlab-Token"), tokenValue).map(([name, v]) => ({ name, ...v })) },
);

/** At most one header of each kind (a repeated X-Service-Secret is its own case). */
const credentials = fc.uniqueArray(credential, { maxLength: 3, selector: (c) => c.name.toLowerCase() });

const signature: fc.Arbitrary<Signature> = fc.record({
  name: fc.oneof(casing("X-Hub-Signature-256"), casing("X-Gitea-Signature"), casing("X-Hub-Signature")),
  kind: fc.constantFrom("valid", "valid", "wrong", "empty"),
  style: fc.constantFrom("sha256", "SHA256", "bare", "sha1"),
});

/** Headers the service does not read; framing and routing headers are set by the request itself. */
const extraHeader: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(
    fc.constantFrom("Content-Type", "content-type", "CONTENT-TYPE"),
    fc.constantFrom(
      "application/json",
      "application/x-www-form-urlencoded",
      "text/plain",
      "multipart/form-data; boundary=x",
      "",
      ";;;",
    ),
  ),
  fc.tuple(
    fc.constantFrom(
      "User-Agent",
      "X-GitHub-Event",
      "X-Gitlab-Event",
      "Accept",
      "X-Forwarded-For",
      "X-Forwarded-Host",
      "Cookie",
      "Referer",
    ),
    headerText(60),
  ),
  fc.tuple(
    fc
      .stringMatching(/^X-[A-Za-z0-9-]{1,20}$/)
      .filter(
        (name) =>
          !/^x-(service-secret|gitlab-token|hub-signature|gitea-signature|forgejo-signature|gogs-signature)/i.test(
            name,
          ),
      ),
    headerText(200),
  ),
  fc.constant(["Expect", "100-continue"] as [string, string]),
);

const hostileRequest: fc.Arbitrary<HostileRequest> = fc.record({
  method: fc.oneof(
    { weight: 12, arbitrary: fc.constant("POST") },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "GET",
        "PUT",
        "DELETE",
        "PATCH",
        "OPTIONS",
        "HEAD",
        "TRACE",
        "PROPFIND",
        "SEARCH",
        "PURGE",
      ),
    },
  ),
  path: fc.oneof(
    { weight: 12, arbitrary: fc.constant(HOOK) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "/",
        "/hook/",
        "//hook",
        "/Hook",
        "/HOOK",
        "/hook/..",
        "/x/../hook",
        "/./hook",
        "/%68ook",
        "/hook%00",
        "/hook;a",
        "/hooks",
        "/hook/x",
        "/hook%2F",
      ),
    },
    { weight: 2, arbitrary: fc.webPath().map((p) => (p.startsWith("/") ? p : `/${p}`)) },
  ),
  query: fc.oneof(
    { weight: 6, arbitrary: fc.constant("") },
    { weight: 2, arbitrary: fc.constantFrom("?format=json", "?format=json&format=text", "?x=1&format=json") },
    {
      weight: 2,
      arbitrary: fc.constantFrom("?ack=1", "?ack", "?ACK=1", "?ack=yes", "?ack=1&format=json", "?format=json&ack=true"),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "?format=JSON",
        "?format=",
        "?ack=no",
        "?ack=0",
        "?%zz=%",
        "?&&==",
        "?format=json#x",
        "#fragment",
      ),
    },
    { weight: 2, arbitrary: fc.webQueryParameters().map((q) => `?${q}`) },
  ),
  host: fc.oneof(
    { weight: 6, arbitrary: fc.constant("127.0.0.1") },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "",
        "localhost:1",
        "[::1",
        "[",
        "a b",
        "x:99999",
        "x:abc",
        "EXAMPLE.com.",
        "x@y",
        "x/y",
        "\u00e9",
      ),
    },
    { weight: 1, arbitrary: headerText(30) },
  ),
  credentials,
  repeatSecret: fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 12, arbitrary: fc.constant(false) }),
  signature: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: signature }),
  extra: fc.array(extraHeader, { maxLength: 4 }),
  body: fc.oneof(
    { weight: 4, arbitrary: fc.constant(new Uint8Array()) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom("{}", '{"ref":"refs/heads/main"}', "payload=%7B%7D")
        .map((s) => new TextEncoder().encode(s)),
    },
    { weight: 2, arbitrary: fc.json({ maxDepth: 3 }).map((s) => new TextEncoder().encode(s)) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: LIMIT }) },
    { weight: 3, arbitrary: fc.integer({ min: LIMIT + 1, max: 5 * LIMIT }).map((n) => new Uint8Array(n).fill(0x7b)) },
  ),
  framing: fc.constantFrom("length", "length", "chunked"),
  chunk: fc.integer({ min: 1, max: 3000 }),
});

/** The header lines of a request, in order. */
function headerLines(req: HostileRequest): [string, string][] {
  const lines: [string, string][] = [["Host", req.host]];
  for (const c of req.credentials) lines.push([c.name, c.value]);
  if (req.repeatSecret) lines.push(["X-Service-Secret", SECRET], ["x-service-secret", SECRET]);
  if (req.signature) lines.push([req.signature.name, signatureValue(req.signature, req.body)]);
  lines.push(...req.extra);
  if (req.framing === "chunked") lines.push(["Transfer-Encoding", "chunked"]);
  else lines.push(["Content-Length", String(req.body.length)]);
  lines.push(["Connection", "close"]);
  return lines;
}

function signatureValue(sig: Signature, body: Uint8Array): string {
  if (sig.kind === "empty") return sig.style === "bare" ? "" : sig.style === "sha1" ? "sha1=" : "sha256=";
  const secret = sig.kind === "valid" ? SECRET : `${SECRET}-old`;
  if (sig.style === "sha1") return `sha1=${hmac("sha1", secret, body)}`;
  const hex = hmac("sha256", secret, body);
  return sig.style === "bare" ? hex : sig.style === "SHA256" ? `SHA256=${hex.toUpperCase()}` : `sha256=${hex}`;
}

function encode(req: HostileRequest): Buffer {
  const head = `${req.method} ${req.path}${req.query} HTTP/1.1\r\n${headerLines(req)
    .map(([n, v]) => `${n}: ${v}`)
    .join("\r\n")}\r\n\r\n`;
  const body = req.framing === "chunked" ? chunkedBytes(req.body, req.chunk) : Buffer.from(req.body);
  return Buffer.concat([Buffer.from(head, "latin1"), body]);
}

/** How a 200 answers, from the query (docs/http.md "The JSON result (`?format=json`)"; docs/forges.md "Acknowledge at once"). */
function answerKind(req: HostileRequest): "stream" | "json" | "ack" | "ack-json" {
  const params = new URL(`http://localhost${req.path}${req.query}`).searchParams;
  const json = params.get("format") === "json";
  const ack = params.get("ack");
  const acknowledge = ack !== null && ["", "1", "true", "yes"].includes(ack.toLowerCase());
  return acknowledge ? (json ? "ack-json" : "ack") : json ? "json" : "stream";
}

/**
 * The one answer the server may give. A request head over 16 KiB is answered 431 by Bun's HTTP parser before
 * the service sees it (a huge header value); within 1 KiB of that limit either answer is accepted, since Bun's
 * exact accounting is its own.
 */
function expectedStatus(req: HostileRequest): { status: number; alternative?: number } {
  const headSize = Buffer.byteLength(
    `${req.method} ${req.path}${req.query} HTTP/1.1\r\n${headerLines(req)
      .map(([n, v]) => `${n}: ${v}`)
      .join("\r\n")}\r\n\r\n`,
    "latin1",
  );
  const service = serviceStatus(req);
  if (headSize > HEAD_LIMIT + 1024) return { status: 431 };
  if (headSize > HEAD_LIMIT - 1024) return { status: 431, alternative: service };
  return { status: service };
}

function serviceStatus(req: HostileRequest): number {
  if (req.method !== "POST") return 404;
  if (new URL(`http://localhost${req.path}${req.query}`).pathname !== HOOK) return 404;
  const signed = req.signature !== undefined && req.signature.kind !== "empty";
  const refused = req.repeatSecret || req.credentials.some((c) => c.verdict === "invalid");
  const accepted = req.credentials.some((c) => c.verdict === "valid");
  // A declared length over the limit is refused before anything else, whatever the credentials.
  if (req.framing === "length" && req.body.length > LIMIT) return 413;
  if (!signed) return !refused && accepted ? 200 : 401;
  if (req.body.length > LIMIT) return 413;
  // Any of the signature headers takes `sha256=<hex>`, `sha1=<hex>` or bare hex (sha256); hex in any case.
  return !refused && req.signature!.kind === "valid" ? 200 : 401;
}

/** A readable account of a request for a failure message (huge values shortened). */
function show(req: HostileRequest): string {
  const short = (s: string) => (s.length > 80 ? `${s.slice(0, 40)}…(${s.length} chars)` : s);
  return JSON.stringify({
    line: `${req.method} ${req.path}${req.query}`,
    headers: headerLines(req).map(([n, v]) => `${n}: ${short(v)}`),
    credentials: req.credentials.map((c) => `${c.name}: ${c.what} (${c.verdict})`),
    body: req.body.length,
    framing: req.framing,
  });
}

/** The deploy id a 200 answer names, after checking the answer has the documented shape. */
function checkDeployed(req: HostileRequest, answer: RawAnswer): string {
  const text = answer.body.toString("utf8");
  switch (answerKind(req)) {
    case "stream":
      expect(answer.headers["content-type"]).toContain("text/plain");
      expect(lastLine(text)).toBe(DONE_OK);
      return /\[deploy\] ([0-9a-f-]{36}) started/.exec(text)![1]!;
    case "json": {
      const result = JSON.parse(text);
      expect(result.ok).toBe(true);
      expect(result.run.exitCode).toBe(0);
      return result.id;
    }
    case "ack-json": {
      const ack = JSON.parse(text);
      expect(ack.accepted).toBe(true);
      return ack.id;
    }
    case "ack":
      expect(text).toStartWith("[accepted] deploy ");
      return UUID.exec(text)![0];
  }
}

function checkRefused(req: HostileRequest, answer: RawAnswer): void {
  if (answer.status === 431 || req.method === "HEAD") return;
  expect(answer.headers["content-type"]).toContain("application/json");
  const error = JSON.parse(answer.body.toString("utf8")).error;
  // A 429 to a request that failed authentication is the backoff, not a full queue.
  const tooMany = serviceStatus(req) === 401 ? "too many failed authentications" : "queue full";
  expect(error).toBe(
    { 401: "unauthorized", 404: "not found", 413: "payload too large", 429: tooMany, 503: "shutting down" }[
      answer.status as 401
    ],
  );
}

describe("property: random methods, paths, queries, headers and bodies against one real server", () => {
  test("only the documented statuses, the exact one the request calls for; a deploy (and log files) for each authorized request and for no other", async () => {
    await using server = await startRecordingServer({ SERVICE_MAX_BODY_BYTES: String(LIMIT) });
    const { repo, ran } = server;
    const deployed: string[] = [];
    const seen = new Map<number, number>();
    const kinds = new Set<string>();
    await fc.assert(
      fc.asyncProperty(hostileRequest, async (req) => {
        const answer = await exchange(server.port, [encode(req)]);
        seen.set(answer.status, (seen.get(answer.status) ?? 0) + 1);
        const expected = expectedStatus(req);
        const allowed = [expected.status, ...(expected.alternative ? [expected.alternative] : [])];
        // Every request comes from 127.0.0.1: once its failures are over the burst, a refused one is answered 429.
        if (allowed.includes(401)) allowed.push(429);
        if (!allowed.includes(answer.status)) {
          throw new Error(
            `answered ${answer.status}, expected ${allowed.join(" or ")}: ${show(req)}\n${answer.raw.toString("latin1").slice(0, 400)}`,
          );
        }
        if (answer.status === 200) {
          const id = checkDeployed(req, answer);
          kinds.add(answerKind(req));
          deployed.push(id);
          // An acknowledged deploy runs on after the answer: let it finish before the next request.
          await waitFor(
            () => ranIds(ran).includes(id) && recordStatus(repo.clone, id) === "done",
            `deploy ${id} to finish`,
          );
        } else {
          checkRefused(req, answer);
        }
        // Exactly the authorized requests ran the script and have log files, whatever was refused since.
        expect(ranIds(ran).sort()).toEqual([...deployed].sort());
        expect(loggedIds(repo.clone)).toEqual([...deployed].sort());
      }),
      {
        seed: Number(process.env.HOSTILE_SEED ?? 20261122),
        numRuns: Number(process.env.HOSTILE_RUNS ?? 300),
        interruptAfterTimeLimit: 150_000,
      },
    );
    // The run exercised every kind of answer the model knows, deploys included.
    for (const status of [200, 401, 404, 413, 429, 431])
      expect({ status, seen: (seen.get(status) ?? 0) > 0 }).toEqual({ status, seen: true });
    expect(deployed.length).toBeGreaterThan(10);
    expect([...kinds].sort()).toEqual(["ack", "ack-json", "json", "stream"]);
    expect(`${server.stdout.text}${server.stderr.text}`).not.toContain("request failed");
    expect(server.proc.exitCode).toBeNull();
  }, 240_000);

  test("malformed HTTP (not HTTP/1.1, bad framing, a lowercase method, junk bytes) and malformed Host: never the service's 500, never a deploy; the server still deploys afterwards", async () => {
    await using server = await startRecordingServer();
    const { repo, ran } = server;
    const authorized = `X-Service-Secret: ${SECRET}\r\n`;
    // Requests the service itself answers, whatever their Host: single-app mode does not route by host.
    const hosts = ["", " ", "[::1", "[", "]", "a b", "x:99999", "x:abc", "x@y", "x/y", "x?y", "x#y", "\u00e9"];
    for (const host of hosts) {
      const refused = await exchange(server.port, [
        `POST ${HOOK} HTTP/1.1\r\nHost: ${host}\r\nX-Service-Secret: wrong\r\nConnection: close\r\n\r\n`,
      ]);
      expect({ host, status: refused.status }).toEqual({ host, status: 401 });
      const other = await exchange(server.port, [
        `POST /elsewhere HTTP/1.1\r\nHost: ${host}\r\n${authorized}Connection: close\r\n\r\n`,
      ]);
      expect({ host, status: other.status }).toEqual({ host, status: 404 });
    }
    const noHost = await exchange(server.port, [`POST ${HOOK} HTTP/1.0\r\nX-Service-Secret: wrong\r\n\r\n`]);
    expect(noHost.status).toBe(401);
    expect(ranIds(ran)).toEqual([]);

    // Requests Bun's HTTP parser refuses before the service sees them (400, 431, 505, or a closed connection).
    const junk: [string, string | Buffer][] = [
      ["lowercase method", `post ${HOOK} HTTP/1.1\r\nHost: x\r\n${authorized}Connection: close\r\n\r\n`],
      ["mixed-case method", `Post ${HOOK} HTTP/1.1\r\nHost: x\r\n${authorized}Connection: close\r\n\r\n`],
      ["unknown method", `FOO ${HOOK} HTTP/1.1\r\nHost: x\r\n${authorized}Connection: close\r\n\r\n`],
      ["asterisk target", `POST * HTTP/1.1\r\nHost: x\r\n${authorized}Connection: close\r\n\r\n`],
      ["HTTP/1.1 without Host", `POST ${HOOK} HTTP/1.1\r\n${authorized}Connection: close\r\n\r\n`],
      ["HTTP/2.0", `POST ${HOOK} HTTP/2.0\r\nHost: x\r\n${authorized}Connection: close\r\n\r\n`],
      ["HTTP/0.9", `POST ${HOOK}\r\n\r\n`],
      ["bare LF", `POST ${HOOK} HTTP/1.1\nHost: x\n${authorized.replace("\r", "")}Connection: close\n\n`],
      [
        "Content-Length and chunked",
        `POST ${HOOK} HTTP/1.1\r\nHost: x\r\n${authorized}Content-Length: 5\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n`,
      ],
      [
        "two Content-Lengths",
        `POST ${HOOK} HTTP/1.1\r\nHost: x\r\n${authorized}Content-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}`,
      ],
      [
        "Content-Length not a number",
        `POST ${HOOK} HTTP/1.1\r\nHost: x\r\n${authorized}Content-Length: -1\r\nConnection: close\r\n\r\n`,
      ],
      [
        "bad chunk size",
        `POST ${HOOK} HTTP/1.1\r\nHost: x\r\nX-Hub-Signature-256: sha256=00\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      ],
      ["header without colon", `POST ${HOOK} HTTP/1.1\r\nHost: x\r\n${authorized}garbage\r\nConnection: close\r\n\r\n`],
      [
        "space before colon",
        `POST ${HOOK} HTTP/1.1\r\nHost: x\r\nX-Service-Secret : ${SECRET}\r\nConnection: close\r\n\r\n`,
      ],
      [
        "control byte in a value",
        `POST ${HOOK} HTTP/1.1\r\nHost: x\r\nX-Service-Secret: ${SECRET}\u0001\r\nConnection: close\r\n\r\n`,
      ],
      [
        "folded header",
        `POST ${HOOK} HTTP/1.1\r\nHost: x\r\nX-Service-Secret: test-secret-\r\n 0123456789\r\nConnection: close\r\n\r\n`,
      ],
      [
        "500 headers",
        `POST ${HOOK} HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 500 }, (_, i) => `X-H${i}: ${i}`).join("\r\n")}\r\nConnection: close\r\n\r\n`,
      ],
      ["binary junk", Buffer.from([0, 1, 2, 0xff, 0xfe, 13, 10, 13, 10])],
      ["a TLS ClientHello", Buffer.from("16030100a5010000a10303", "hex")],
    ];
    for (const [what, bytes] of junk) {
      const answer = await exchange(server.port, [bytes]);
      expect({ what, status: answer.status, ok: [0, 400, 404, 431, 505].includes(answer.status) }).toEqual({
        what,
        status: answer.status,
        ok: true,
      });
      expect({ what, internal: answer.raw.toString("latin1").includes("internal error") }).toEqual({
        what,
        internal: false,
      });
    }
    expect(ranIds(ran)).toEqual([]);
    expect(logFiles(repo.clone)).toEqual([]);
    expect(`${server.stdout.text}${server.stderr.text}`).not.toContain("request failed");

    // A malformed Host does not stop an authorized deploy in single-app mode (the host routes nothing here).
    for (const host of ["[::1", ""]) {
      const answer = await exchange(server.port, [
        `POST ${HOOK} HTTP/1.1\r\nHost: ${host}\r\n${authorized}Connection: close\r\n\r\n`,
      ]);
      expect(answer.status).toBe(200);
      expect(lastLine(answer.body.toString("utf8"))).toBe(DONE_OK);
    }
    expect(ranIds(ran).length).toBe(2);
    expect(loggedIds(repo.clone).length).toBe(2);
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------------------
// Limits and load.

const MB = 1024 * 1024;

describe("limits and load", () => {
  test("200 MB bodies over SERVICE_MAX_BODY_BYTES (chunked with a signature, Content-Length with a signature, chunked with a branch filter): 413 after a small part is read, the server's RSS grows by far less than the body, nothing deploys", async () => {
    await using server = await startRecordingServer({ SERVICE_MAX_BODY_BYTES: "65536" });
    const { repo, ran } = server;
    const TOTAL = 200 * MB;
    const signed = (framing: string) =>
      `POST ${HOOK} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Hub-Signature-256: sha256=${"0".repeat(64)}\r\n${framing}\r\n\r\n`;
    // The first request warms the server up, so the baseline is not its cold start.
    const warm = await exchange(server.port, [
      `POST ${HOOK} HTTP/1.1\r\nHost: x\r\nX-Hub-Signature-256: sha256=00\r\nContent-Length: 70000\r\nConnection: close\r\n\r\n`,
      Buffer.alloc(70_000),
    ]);
    expect(warm.status).toBe(413);
    const branchHead = `POST ${HOOK} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Service-Secret: ${SECRET}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const cases = [
      { what: "chunked, signed", head: signed("Transfer-Encoding: chunked"), chunked: true, branchFilter: false },
      {
        what: "Content-Length, signed",
        head: signed(`Content-Length: ${TOTAL}`),
        chunked: false,
        branchFilter: false,
      },
      // With a branch filter the body is read even for X-Service-Secret (the config file is re-read per POST).
      { what: "chunked, branch filter", head: branchHead, chunked: true, branchFilter: true },
    ];
    const before = rssBytes(server.proc.pid);
    const peak = peakOf(() => rssBytes(server.proc.pid), 25);
    for (const { what, head, chunked, branchFilter } of cases) {
      if (branchFilter) writeFileSync(join(repo.clone, "service.yaml"), "branch: main\n");
      // Refused after reading a small part: two pieces over the limit and the body left unfinished get the 413.
      const early = await upload(server.port, head, 128 * 1024, { chunked, finish: false });
      expect({ what, status: early.answer.status }).toEqual({ what, status: 413 });
      // The whole 200 MB is refused the same way, without the server keeping it.
      const { answer } = await upload(server.port, head, TOTAL, { chunked, finish: true });
      expect({ what, status: answer.status }).toEqual({ what, status: 413 });
      expect(JSON.parse(answer.body.toString("utf8")).error).toBe("payload too large");
    }
    expect(peak() - before).toBeLessThan(64 * MB);
    expect(ranIds(ran)).toEqual([]);
    expect(logFiles(repo.clone)).toEqual([]);
    expect(server.proc.exitCode).toBeNull();
    // Still serving: an authorized push to main deploys.
    const res = await fetch(`http://127.0.0.1:${server.port}${HOOK}`, {
      method: "POST",
      headers: { "x-service-secret": SECRET, "content-type": "application/json" },
      body: '{"ref":"refs/heads/main"}',
    });
    expect(lastLine(await res.text())).toBe(DONE_OK);
    expect(ranIds(ran).length).toBe(1);
  }, 180_000);

  test("20 slow clients (10 dribbling their headers, 10 a signed body, a byte every 300 ms) do not stop an authorized POST from deploying", async () => {
    await using server = await startRecordingServer();
    const { repo, ran } = server;
    const slow: ReturnType<typeof dribble>[] = [];
    await using _cleanup = defer(() => {
      for (const s of slow) s.close();
    });
    for (let i = 0; i < 10; i++) {
      slow.push(
        dribble(
          server.port,
          `POST ${HOOK} HTTP/1.1\r\nHost: 127.0.0.1\r\n`,
          `X-Padding-${i}: ${"a".repeat(2000)}\r\n`,
          300,
        ),
      );
      const head = `POST ${HOOK} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Hub-Signature-256: sha256=${"0".repeat(64)}\r\nContent-Length: 100000\r\n\r\n`;
      slow.push(dribble(server.port, head, "{".repeat(2000), 300));
    }
    await waitFor(() => slow.every((s) => s.sent() >= 3), "every slow client to be part-way through its request");
    for (const format of ["", "?format=json"]) {
      const res = await fetch(`http://127.0.0.1:${server.port}${HOOK}${format}`, {
        method: "POST",
        headers: { "x-service-secret": SECRET },
      });
      expect(res.status).toBe(200);
      const body = await res.text();
      if (format) expect(JSON.parse(body).ok).toBe(true);
      else expect(lastLine(body)).toBe(DONE_OK);
    }
    // They were still dribbling all along: none of them finished its request.
    expect(slow.every((s) => s.sent() < 2000)).toBe(true);
    expect(ranIds(ran).length).toBe(2);
    expect(loggedIds(repo.clone).length).toBe(2);
  }, 120_000);

  test("a 10 s unauthorized flood (8 concurrent loops of refused POSTs) during a running deploy: the flood gets 401 for its first failures, then 429 at once, the deploy's output is complete and ends [done] ok=true, the only log files are the deploy's two", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const script = join(tempDir("service-ticks-"), "ticks.sh");
    writeFileSync(
      script,
      [
        "#!/bin/sh",
        "i=0",
        'while [ ! -f "$GATE_FILE" ]; do echo "tick $i"; i=$((i+1)); sleep 0.05; done',
        'echo "end $i"',
        "",
      ].join("\n"),
    );
    await using server = await startServer(repo.clone, {
      SERVICE_HOSTNAME: "127.0.0.1",
      SERVICE_SECRET: SECRET,
      SERVICE_PATH: HOOK,
      SERVICE_RUN_SCRIPT: `sh ${script}`,
      ...gate.env,
    });
    const url = `http://127.0.0.1:${server.port}${HOOK}`;
    await using _cleanup = defer(() => gate.open());
    const deploy = new StreamReader(
      await fetch(url, { method: "POST", headers: { authorization: `Bearer ${SECRET}` } }),
    );
    await waitFor(() => deploy.text.includes("tick 0\n"), "the deploy's first output");

    const refused: RequestInit[] = [
      { method: "POST", headers: { "x-service-secret": `${SECRET}x` } },
      { method: "POST", headers: { authorization: `Bearer ${SECRET.slice(1)}` } },
      { method: "POST" },
      {
        method: "POST",
        headers: { "x-hub-signature-256": `sha256=${"0".repeat(64)}`, "content-type": "application/json" },
        body: '{"ref":"refs/heads/main"}',
      },
    ];
    const statuses = new Map<number, number>();
    const until = Date.now() + 10_000;
    const loop = async (n: number) => {
      for (let i = 0; i < 20_000 && Date.now() < until; i++) {
        const res = await fetch(url, refused[(n + i) % refused.length]);
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, n) => loop(n)));
    // The deploy was running through the whole flood.
    expect(deploy.text).not.toContain("[done]");
    gate.open();
    const text = await deploy.done;

    expect([...statuses.keys()].sort()).toEqual([401, 429]);
    // The burst, plus one a second while the flood lasted (with room for a slow start).
    expect(statuses.get(401)!).toBeGreaterThanOrEqual(FAILURE_BURST);
    expect(statuses.get(401)!).toBeLessThanOrEqual(FAILURE_BURST + 15);
    expect(statuses.get(429)!).toBeGreaterThan(100);
    expect(lastLine(text)).toBe(DONE_OK);
    const ticks = [...text.matchAll(/^tick (\d+)$/gm)].map((m) => Number(m[1]));
    const end = Number(/^end (\d+)$/m.exec(text)?.[1]);
    expect(ticks.length).toBeGreaterThan(0);
    expect(ticks).toEqual(Array.from({ length: end }, (_, i) => i));
    const files = logFiles(repo.clone);
    expect(files.length).toBe(2);
    const log = readFileSync(join(repo.clone, ".service", "logs", files.find((f) => f.endsWith(".log"))!), "utf8");
    expect(log).toContain(`tick ${end - 1}\nend ${end}\n`);
    expect(lastLine(log)).toBe(DONE_OK);
  }, 120_000);
});

describe("one deploy per connection, and declared lengths", () => {
  test("three authorized POSTs pipelined on one connection: no deploy is lost (every deploy that ran was answered up to [done], none ran unanswered), deploy answers say Connection: close, and the same requests sent one per connection all deploy", async () => {
    await using server = await startRecordingServer();
    const { ran } = server;
    const request = `POST ${HOOK} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Service-Secret: ${SECRET}\r\nContent-Length: 2\r\n\r\n{}`;
    const pipelined = await exchange(server.port, [request.repeat(3)]);
    const answered = [...pipelined.raw.toString("latin1").matchAll(/^\[done\] ok=true exitCode=0$/gm)].length;
    if (pipelined.status !== 0) expect(pipelined.headers.connection).toBe("close");
    // Deploys of one repository run in order: once a later one is done, every earlier one is too.
    const later = await exchange(server.port, [request.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n")]);
    expect(later.headers.connection).toBe("close");
    expect(lastLine(later.body.toString("utf8"))).toBe(DONE_OK);
    expect(ranIds(ran).length - 1).toBe(answered);

    // Sent again one per connection, as a client whose connection closed does: each deploys and is answered.
    const retried = await Promise.all([0, 1, 2].map(() => exchange(server.port, [request])));
    for (const answer of retried) {
      expect(answer.headers.connection).toBe("close");
      expect(lastLine(answer.body.toString("utf8"))).toBe(DONE_OK);
    }
    expect(ranIds(ran).length).toBe(answered + 4);
  }, 60_000);

  test("a declared Content-Length over maxBodyBytes gets the JSON 413 before any work, whatever the authentication (right secret, Bearer, wrong secret, signature), before the body is sent", async () => {
    await using server = await startRecordingServer({ SERVICE_MAX_BODY_BYTES: String(LIMIT) });
    const { repo, ran } = server;
    const credentials = [
      `X-Service-Secret: ${SECRET}`,
      `Authorization: Bearer ${SECRET}`,
      "X-Service-Secret: wrong",
      `X-Hub-Signature-256: sha256=${"0".repeat(64)}`,
      "",
    ];
    for (const credential of credentials) {
      const head = `POST ${HOOK} HTTP/1.1\r\nHost: 127.0.0.1\r\n${credential ? `${credential}\r\n` : ""}Content-Length: ${40 * MB}\r\n\r\n`;
      const { answer } = await upload(server.port, head, 64 * 1024, { chunked: false, finish: false });
      expect({ credential, status: answer.status }).toEqual({ credential, status: 413 });
      expect(answer.headers["content-type"]).toContain("application/json");
      expect(JSON.parse(answer.body.toString("utf8")).error).toBe("payload too large");
    }
    expect(ranIds(ran)).toEqual([]);
    expect(logFiles(repo.clone)).toEqual([]);
  }, 60_000);
});
