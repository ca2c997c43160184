import { describe, expect, test } from "bun:test";
import { FAILURE_BURST } from "../../src/http/throttle.ts";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { makeRepo, SECRET, waitFor } from "../_support/helpers.ts";
import { exchange, type RawAnswer } from "../_support/raw-http.ts";

const PAGES = ["/", "/apps/default", "/deploys", "/deploys/last"];

/** Requests the pages in turn with `headers` until one answers 429 (bounded); the statuses seen. */
async function guessOnPages(admin: string, headers: Record<string, string>): Promise<Response[]> {
  const answers: Response[] = [];
  for (let i = 0; i < FAILURE_BURST * 3 && answers.at(-1)?.status !== 429; i++) {
    const res = await fetch(`${admin}${PAGES[i % PAGES.length]}`, { headers });
    await res.clone().text();
    answers.push(res);
  }
  return answers;
}

/** One raw GET to `port` on 127.0.0.1 from `from` (any 127.0.0.x on Linux), with `headers`. */
function rawGet(port: number, path: string, from: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const head = [`GET ${path} HTTP/1.1`, "Host: localhost", "Connection: close"];
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  return exchange(port, [`${head.join("\r\n")}\r\n\r\n`], { localAddress: from });
}

/** One raw POST of `body` to `port` on 127.0.0.1 from `from`. */
function rawPost(
  port: number,
  path: string,
  from: string,
  headers: Record<string, string>,
  body = "",
): Promise<RawAnswer> {
  const head = [
    `POST ${path} HTTP/1.1`,
    "Host: localhost",
    "Connection: close",
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  return exchange(port, [`${head.join("\r\n")}\r\n\r\n${body}`], { localAddress: from });
}

const RIGHT = { authorization: `Bearer ${ADMIN_TOKEN}` };
const WRONG = { authorization: "Bearer wrong-token-0123456789abcdef" };

describe("admin listener: an address over its budget has no credential checked until its backoff ends", () => {
  test("the right token from an address over budget is answered 429 on the API, the pages, /login and /metrics, and accepted again once the backoff ends; another address is unaffected", async () => {
    const repo = makeRepo();
    const { server, admin } = await startAdmin(repo.clone, { SERVICE_ADMIN_HOSTNAME: "127.0.0.1" });
    await using _server = server;
    const port = Number(new URL(admin).port);
    const guesser = "127.0.0.3";
    /** Spends the guesser's budget (wrong tokens until one is answered 429), so the next request is over it. */
    const overBudget = async () => {
      const statuses: number[] = [];
      for (let i = 0; i < FAILURE_BURST * 3 && statuses.at(-1) !== 429; i++)
        statuses.push((await rawGet(port, "/api/apps", guesser, WRONG)).status);
      expect(statuses.at(-1)).toBe(429);
    };

    /**
     * The right token's answer sent right after the budget ran out. The budget refills one failure a second: on a
     * machine slow enough for a second to pass in between, the address is within its budget again and the token
     * is served, so that is tried again (a few times, never a wait); an implementation that checks a throttled
     * address's token is served every time and fails.
     */
    const rightWhileOver = async <T extends { status: number }>(ask: () => Promise<T>): Promise<T> => {
      let answer: T | undefined;
      for (let i = 0; i < 5 && answer?.status !== 429; i++) {
        await overBudget();
        answer = await ask();
      }
      return answer!;
    };

    // Over budget: the right token gets the same 429, whatever the route.
    const api = await rightWhileOver(() => rawGet(port, "/api/apps", guesser, RIGHT));
    expect(api.status).toBe(429);
    expect(Number(api.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(api.body.toString("utf8")).error).toBe("too many failed authentications");
    const page = await rightWhileOver(() => rawGet(port, "/deploys", guesser, RIGHT));
    expect(page.status).toBe(429);
    expect(page.body.toString("utf8")).toContain("Too many wrong tokens");
    const metrics = await rightWhileOver(() =>
      rawGet(port, "/metrics", guesser, { ...RIGHT, "x-forwarded-for": "203.0.113.5" }),
    );
    expect(metrics.status).toBe(429);
    const login = await rightWhileOver(() =>
      rawPost(
        port,
        "/login",
        guesser,
        { "content-type": "application/x-www-form-urlencoded" },
        new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
      ),
    );
    expect(login.status).toBe(429);
    expect(login.headers["set-cookie"]).toBeUndefined();

    // Another address: its wrong token is a plain 401, its right token is served.
    expect((await rawGet(port, "/api/apps", "127.0.0.4", WRONG)).status).toBe(401);
    expect((await rawGet(port, "/api/apps", "127.0.0.4", RIGHT)).status).toBe(200);
    expect((await rawGet(port, "/healthz", guesser)).status).toBe(200);

    // Once the backoff ends, the right token from the guesser's address is accepted again.
    const accepted = await waitFor(async () => {
      const answer = await rawGet(port, "/api/apps", guesser, RIGHT);
      expect([200, 429]).toContain(answer.status);
      return answer.status === 200 ? answer : undefined;
    }, "the right token accepted once the backoff ends");
    expect(JSON.parse(accepted.body.toString("utf8")).apps).toBeArray();
  });

  test("the webhook port keeps accepting the right secret from an address it throttles (a stranger's broken hook must not block the forge's deliveries)", async () => {
    const repo = makeRepo();
    const { server } = await startAdmin(repo.clone, { SERVICE_HOSTNAME: "127.0.0.1", SERVICE_RUN_SCRIPT: "true" });
    await using _server = server;
    const statuses: number[] = [];
    for (let i = 0; i < FAILURE_BURST * 3 && statuses.at(-1) !== 429; i++)
      statuses.push((await rawPost(server.port, "/", "127.0.0.3", { "x-service-secret": `${SECRET}x` })).status);
    expect(statuses.at(-1)).toBe(429);
    const deploy = await rawPost(server.port, "/?format=json", "127.0.0.3", { "x-service-secret": SECRET });
    expect(deploy.status).toBe(200);
    expect(JSON.parse(deploy.body.toString("utf8")).ok).toBe(true);
  });
});

describe('admin listener: every wrong credential is counted, pages included (docs/admin.md "What it refuses")', () => {
  test("a wrong Bearer token on the dashboard pages is slowed like on the API, in the same throttle", async () => {
    const repo = makeRepo();
    const { server, admin } = await startAdmin(repo.clone);
    await using _server = server;
    const answers = await guessOnPages(admin, { authorization: "Bearer wrong-token-0123456789abcdef" });
    expect(answers.slice(0, FAILURE_BURST).every((res) => res.status === 401)).toBe(true);
    const last = answers.at(-1)!;
    expect(last.status).toBe(429);
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await last.text()).toContain("Too many wrong tokens");
    // The same budget: the API is refused too now.
    const api = await fetch(`${admin}/api/apps`, { headers: { authorization: "Bearer wrong-token-0123456789abcdef" } });
    expect(api.status).toBe(429);
    await api.text();
  });

  test("a stale or made-up session cookie on the pages is counted, and the page clears it", async () => {
    const repo = makeRepo();
    const { server, admin } = await startAdmin(repo.clone);
    await using _server = server;
    const answers = await guessOnPages(admin, { cookie: "service_session=made-up-session-0123456789" });
    expect(answers[0]!.status).toBe(401);
    expect(answers[0]!.headers.get("set-cookie")).toContain("service_session=;");
    expect(answers[0]!.headers.get("set-cookie")).toContain("Max-Age=0");
    expect(answers.at(-1)!.status).toBe(429);
    // A browser without any credential just gets the form, uncounted.
    const plain = await fetch(`${admin}/`);
    expect(plain.status).toBe(401);
    expect(plain.headers.get("set-cookie")).toBeNull();
    await plain.text();
  });
});
