import { describe, expect, test } from "bun:test";
import { FAILURE_BURST } from "../../src/http/throttle.ts";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { makeRepo } from "../_support/helpers.ts";

const PAGES = ["/", "/deploys", "/deploys/last"];

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
    // The right token is never slowed.
    for (const path of PAGES) {
      const ok = await fetch(`${admin}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(ok.status).toBe(200);
      await ok.text();
    }
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
