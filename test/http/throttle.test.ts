/**
 * Failed-authentication backoff: a client that keeps sending wrong or missing secrets is answered 429 after a
 * burst, while a request with the right secret (from the same address too) and every other client are not
 * affected. Memory stays bounded whatever addresses an attacker uses.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHmac } from "node:crypto";
import { clientAddress, clientKey, FAILURE_BURST, FailureThrottle, MAX_CLIENTS } from "../../src/http/throttle.ts";
import { exchange, type RawAnswer } from "../_support/raw-http.ts";
import { lastLine, makeRepo, SECRET, startServer } from "../_support/helpers.ts";

setDefaultTimeout(60_000);

const HOOK = "/hook";
const DONE_OK = "[done] ok=true exitCode=0";

describe("FailureThrottle (pure)", () => {
  test("a client may fail FAILURE_BURST times at once; the next failure waits 1 s, and one more is allowed a second later", () => {
    const throttle = new FailureThrottle();
    const waits = Array.from({ length: FAILURE_BURST + 3 }, () => throttle.fail("192.0.2.1", 1_000));
    expect(waits).toEqual([...Array<number>(FAILURE_BURST).fill(0), 1, 1, 1]);
    expect(throttle.fail("192.0.2.1", 1_999)).toBe(1);
    expect(throttle.fail("192.0.2.1", 2_000)).toBe(0);
    expect(throttle.fail("192.0.2.1", 2_000)).toBe(1);
    // Refused failures are not counted: waiting is enough, a flood does not dig a deeper hole.
    expect(throttle.fail("192.0.2.1", 3_000)).toBe(0);
  });

  test("throttled answers 429 only while the client is over its budget, and counts nothing itself", () => {
    const throttle = new FailureThrottle();
    for (let i = 0; i < FAILURE_BURST - 1; i++) throttle.fail("192.0.2.1", 1_000);
    expect(throttle.throttled("192.0.2.1", 1_000)).toBeUndefined();
    expect(throttle.throttled("192.0.2.1", 1_000)).toBeUndefined();
    throttle.fail("192.0.2.1", 1_000);
    const refused = throttle.throttled("192.0.2.1", 1_000)!;
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(throttle.throttled("192.0.2.2", 1_000)).toBeUndefined();
    expect(throttle.throttled("192.0.2.1", 2_000)).toBeUndefined();
  });

  test("another client keeps its whole burst while one is throttled", () => {
    const throttle = new FailureThrottle();
    for (let i = 0; i <= FAILURE_BURST; i++) throttle.fail("192.0.2.1", 0);
    expect(throttle.fail("192.0.2.1", 0)).toBe(1);
    expect(Array.from({ length: FAILURE_BURST }, () => throttle.fail("192.0.2.2", 0))).toEqual(
      Array<number>(FAILURE_BURST).fill(0),
    );
  });

  test("memory stays bounded: 3 × MAX_CLIENTS addresses leave at most MAX_CLIENTS remembered, the least recently refused forgotten first", () => {
    const throttle = new FailureThrottle();
    for (let i = 0; i <= FAILURE_BURST; i++) throttle.fail("192.0.2.1", 0);
    for (let i = 0; i < 3 * MAX_CLIENTS; i++) {
      throttle.fail(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 0);
      if (i % 1000 === 0) throttle.fail("192.0.2.1", 0);
    }
    expect(throttle.size).toBe(MAX_CLIENTS);
    // The flooder kept being refused, so it stayed remembered (and throttled) while others came and went.
    expect(throttle.fail("192.0.2.1", 0)).toBe(1);
    expect(throttle.fail("10.0.0.0", 0)).toBe(0);
  });

  test("an IPv6 client is counted per /64 (it holds the whole /64); IPv4 and IPv4-mapped per address", () => {
    const cases: [string, string][] = [
      ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
      ["2001:db8:1:2:ffff:eeee:dddd:cccc", "2001:db8:1:2::/64"],
      ["2001:0db8:0001:0002:0:0:0:9", "2001:db8:1:2::/64"],
      ["[2001:db8:1:2::3]", "2001:db8:1:2::/64"],
      ["2001:db8::", "2001:db8:0:0::/64"],
      ["::1", "0:0:0:0::/64"],
      ["fe80::1%eth0", "fe80:0:0:0::/64"],
      ["::ffff:127.0.0.1", "127.0.0.1"],
      ["127.0.0.2", "127.0.0.2"],
      ["", ""],
    ];
    for (const [address, key] of cases) expect({ address, key: clientKey(address) }).toEqual({ address, key });
    const throttle = new FailureThrottle();
    for (let i = 0; i <= FAILURE_BURST; i++) throttle.fail(`2001:db8:1:2::${i.toString(16)}`, 0);
    expect(throttle.fail("2001:db8:1:2:abcd::1", 0)).toBe(1);
    expect(throttle.fail("2001:db8:1:3::1", 0)).toBe(0);
  });

  test("an absurdly long forwarded address is cut: it cannot make a key of any size", () => {
    expect(clientKey("x".repeat(100_000)).length).toBeLessThanOrEqual(64);
  });

  test("the client address: the socket's, or with trustProxy the rightmost X-Forwarded-For entry (the one the proxy appended)", () => {
    const socket = () => "127.0.0.1";
    const headers = (value?: string) => new Headers(value === undefined ? {} : { "x-forwarded-for": value });
    const cases: [string | undefined, boolean, string][] = [
      ["203.0.113.9", false, "127.0.0.1"],
      ["203.0.113.9", true, "203.0.113.9"],
      ["1.2.3.4, 203.0.113.9", true, "203.0.113.9"],
      ["1.2.3.4,203.0.113.9 ", true, "203.0.113.9"],
      ["", true, "127.0.0.1"],
      ["1.2.3.4, ", true, "127.0.0.1"],
      [undefined, true, "127.0.0.1"],
    ];
    for (const [forwarded, trust, address] of cases) {
      expect({ forwarded, trust, address: clientAddress(headers(forwarded), socket, trust) }).toEqual({
        forwarded,
        trust,
        address,
      });
    }
  });
});

/** One raw HTTP/1.1 POST to 127.0.0.1 from `localAddress` (any 127.0.0.x works on Linux); waits for the close. */
function rawPost(
  port: number,
  headers: Record<string, string>,
  localAddress = "127.0.0.1",
  body = "",
): Promise<RawAnswer> {
  const head = [
    `POST ${HOOK} HTTP/1.1`,
    "Host: localhost",
    "Connection: close",
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  return exchange(port, [`${head.join("\r\n")}\r\n\r\n${body}`], { localAddress });
}

const WRONG: Record<string, string>[] = [
  { "x-service-secret": `${SECRET}x` },
  { authorization: `Bearer ${SECRET.slice(1)}` },
  {},
  { "x-hub-signature-256": `sha256=${"0".repeat(64)}`, "content-type": "application/json" },
];

/** Sends wrong secrets from `from` until one is answered 429 (at most `limit`); returns every answer. */
async function floodUntilThrottled(
  port: number,
  from: string,
  extra: (i: number) => Record<string, string> = () => ({}),
  limit = 200,
): Promise<RawAnswer[]> {
  const answers: RawAnswer[] = [];
  for (let i = 0; i < limit; i++) {
    const answer = await rawPost(port, { ...WRONG[i % WRONG.length], ...extra(i) }, from, "{}");
    answers.push(answer);
    if (answer.status === 429) break;
  }
  return answers;
}

function expectThrottled(answers: RawAnswer[]): void {
  const statuses = answers.map((a) => a.status);
  // Within the burst every failure is a plain 401; the flood is then refused at once with 429.
  expect(statuses.slice(0, FAILURE_BURST)).toEqual(Array<number>(FAILURE_BURST).fill(401));
  expect(statuses.at(-1)).toBe(429);
  expect(new Set(statuses.slice(0, -1))).toEqual(new Set([401]));
  const last = answers.at(-1)!;
  expect(last.headers["content-type"]).toContain("application/json");
  expect(Number(last.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  const body = JSON.parse(last.body.toString("utf8"));
  expect(body.error).toBe("too many failed authentications");
  expect(body.message).toContain("Retry-After");
}

describe("failed-authentication backoff (end to end)", () => {
  test("a burst of wrong secrets from 127.0.0.1 gets 429 after the burst; an authorized POST from 127.0.0.1 still deploys; a wrong secret from 127.0.0.2 still gets 401", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_HOSTNAME: "127.0.0.1",
      SERVICE_SECRET: SECRET,
      SERVICE_PATH: HOOK,
      SERVICE_RUN_SCRIPT: "echo deployed",
    });
    expectThrottled(await floodUntilThrottled(server.port, "127.0.0.1"));

    // The right secret from the throttled address: checked first, never slowed.
    const authorized = await rawPost(server.port, { "x-service-secret": SECRET }, "127.0.0.1");
    expect(authorized.status).toBe(200);
    expect(lastLine(authorized.body.toString("utf8"))).toBe(DONE_OK);
    const body = '{"ref":"refs/heads/main"}';
    const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
    const signed = await rawPost(
      server.port,
      { "x-hub-signature-256": signature, "content-type": "application/json" },
      "127.0.0.1",
      body,
    );
    expect(signed.status).toBe(200);
    expect(lastLine(signed.body.toString("utf8"))).toBe(DONE_OK);

    // Wrong secrets from there are still slowed (the deploys took a moment: a token or two may have come back).
    expect((await floodUntilThrottled(server.port, "127.0.0.1")).at(-1)!.status).toBe(429);
    // Another address is not.
    const other = await rawPost(server.port, WRONG[0]!, "127.0.0.2");
    expect(other.status).toBe(401);
    expect(JSON.parse(other.body.toString("utf8")).error).toBe("unauthorized");
    expect(`${server.stdout.text}${server.stderr.text}`).not.toContain("request failed");
  });

  test("with trustProxy, each X-Forwarded-For client (the rightmost entry) has its own budget; without it the header is ignored, so a spoofed one escapes nothing", async () => {
    const repo = makeRepo();
    const env = {
      SERVICE_HOSTNAME: "127.0.0.1",
      SERVICE_SECRET: SECRET,
      SERVICE_PATH: HOOK,
      SERVICE_RUN_SCRIPT: "true",
    };
    {
      await using proxied = await startServer(repo.clone, { ...env, SERVICE_TRUST_PROXY: "true" });
      // The client puts a new entry of its own first every time; the proxy appends the real one, which is counted.
      expectThrottled(
        await floodUntilThrottled(proxied.port, "127.0.0.1", (i) => ({
          "x-forwarded-for": `198.51.100.${i}, 203.0.113.1`,
        })),
      );
      const otherClient = await rawPost(proxied.port, { ...WRONG[0]!, "x-forwarded-for": "203.0.113.1, 203.0.113.2" });
      expect(otherClient.status).toBe(401);
      expect(
        (await rawPost(proxied.port, { "x-service-secret": SECRET, "x-forwarded-for": "203.0.113.1" })).status,
      ).toBe(200);
    }

    await using direct = await startServer(repo.clone, env);
    // A new forwarded address every time changes nothing: the socket's address is counted.
    expectThrottled(
      await floodUntilThrottled(direct.port, "127.0.0.1", (i) => ({ "x-forwarded-for": `203.0.113.${i}` })),
    );
  });
});
